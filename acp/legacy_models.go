package acp

import (
	"bytes"
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/setup"
)

// The model list ACP 1.x removed: session/new, load and resume answered
// with `models` {currentModelId, availableModels}, changed with
// session/set_model. The published protocol offers the model as a config
// option of category "model" instead, and the ACP Go SDK no longer has
// either; Gemini CLI still speaks the old form. This file is the one place
// kandev speaks it, and only to an agent that answered with such a list:
// the list is read off the raw answer (the SDK's types drop it) and
// session/set_model is written past the SDK (Conn.call).

// methodSetModel is the removed method, on the wire.
const methodSetModel = "session/set_model"

// legacyModels is the removed `models` field, as agents still send it.
type legacyModels struct {
	CurrentModelID  string `json:"currentModelId"`
	AvailableModels []struct {
		ModelID string `json:"modelId"`
		Name    string `json:"name"`
	} `json:"availableModels"`
}

// hasLegacyModels reports whether line may be an answer with a model list.
func hasLegacyModels(line []byte) bool {
	return bytes.Contains(line, []byte(`"availableModels"`))
}

// noteLegacyModels keeps the model list of an answer to session/new, load
// or resume; called on the agent's line before the SDK reads it, so the
// caller that the answer wakes finds it (takeLegacyModels).
func (c *Conn) noteLegacyModels(line []byte) {
	raw := gjson.GetBytes(line, "result.models")
	if !raw.IsObject() {
		return
	}
	var m legacyModels
	if json.Unmarshal([]byte(raw.Raw), &m) != nil {
		return
	}
	out := &setup.Models{Current: m.CurrentModelID, Available: []string{}}
	names := map[string]string{}
	for _, a := range m.AvailableModels {
		out.Available = append(out.Available, a.ModelID)
		names[a.ModelID] = a.Name
	}
	c.offeredMu.Lock()
	c.legacy, c.legacyNames = out, names
	c.offeredMu.Unlock()
}

// takeLegacyModels is the model list of the answer just read (nil: it had
// none), forgotten so that the next answer is read afresh.
func (c *Conn) takeLegacyModels() *setup.Models {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	m := c.legacy
	c.legacy = nil
	return m
}

// setLegacyModel sends session/set_model.
func (c *Conn) setLegacyModel(ctx context.Context, token, model string) error {
	return c.call(ctx, methodSetModel, map[string]string{"sessionId": token, "modelId": model}, nil)
}

// ModelOptionID is the id of the config option that stands for a model
// list outside the config options (AgentSetup.PublishedOptions).
const ModelOptionID = "model"

// PublishedOptions is the agent's config options as the published protocol
// has them: a model list outside them becomes a select of category
// "model" (id ModelOptionID, or "" when the agent offers none or already
// has a model option). An editor is shown these and sets the model
// through that option.
func (a AgentSetup) PublishedOptions() (opts []sdk.SessionConfigOption, modelOption string) {
	opts = cloneOptions(a.ConfigOptions)
	if a.Models == nil || len(a.Models.Available) == 0 || hasModelOption(opts) {
		return opts, ""
	}
	vals := sdk.SessionConfigSelectOptionsUngrouped{}
	for _, m := range a.Models.Available {
		name := a.ModelNames[m]
		if name == "" {
			name = m
		}
		vals = append(vals, sdk.SessionConfigSelectOption{Name: name, Value: sdk.SessionConfigValueId(m)})
	}
	opt := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(a.Models.Current), sdk.SessionConfigSelectOptions{Ungrouped: &vals})
	cat := sdk.SessionConfigOptionCategoryModel
	opt.Select.Id, opt.Select.Name, opt.Select.Category = ModelOptionID, "Model", &cat
	for _, o := range opts {
		if o.Select != nil && o.Select.Id == ModelOptionID || o.Boolean != nil && o.Boolean.Id == ModelOptionID {
			opt.Select.Id = "_kandev/model"
		}
	}
	return append([]sdk.SessionConfigOption{opt}, opts...), string(opt.Select.Id)
}

func hasModelOption(opts []sdk.SessionConfigOption) bool {
	for _, o := range opts {
		if o.Select != nil && o.Select.Category != nil && *o.Select.Category == sdk.SessionConfigOptionCategoryModel {
			return true
		}
	}
	return false
}
