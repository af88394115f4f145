package editor

import (
	"slices"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/acp"
)

// What an editor is shown of the agent's setup follows what the editor
// declared in initialize, never more: a boolean config option goes only to
// an editor that declared clientCapabilities.session.configOptions.boolean
// (any other gets it as a select of "true" and "false", which kandev sets
// on the agent as the boolean it is), and the model is a config option of
// category "model" (an agent's models list, legacy_models.go in acp, is
// shown as one). The SDK's types drop the session capability, so it is read
// off the raw initialize request as it passes (wire.pump).

// editorCaps is what the editor declared beyond the SDK's types.
type editorCaps struct {
	booleanOptions atomic.Bool
	subagents      atomic.Bool // clientCapabilities.subagents (children.go)
}

// noteInitialize reads the capabilities of an initialize request line.
func (c *editorCaps) noteInitialize(line []byte) {
	if gjson.GetBytes(line, "method").Str != "initialize" {
		return
	}
	b := gjson.GetBytes(line, "params.clientCapabilities.session.configOptions.boolean")
	c.booleanOptions.Store(b.IsObject())
	c.subagents.Store(gjson.GetBytes(line, "params.clientCapabilities.subagents").IsObject())
}

// Boolean option values as a select shows them.
const (
	selectTrue  = "true"
	selectFalse = "false"
)

// shownOptions is the agent's setup as config options for this editor
// (nil when the agent offers none).
func (srv *server) shownOptions(a acp.AgentSetup) []sdk.SessionConfigOption {
	opts, _ := a.PublishedOptions()
	return srv.forEditor(opts)
}

// optionsShown is srv.shownOptions with the _kandev/agent option after
// the agent's own (agentoption.go): what every answer and
// config_option_update shows the editor.
func (s *session) optionsShown(a acp.AgentSetup) []sdk.SessionConfigOption {
	return s.withAgentOption(s.srv.shownOptions(a))
}

// forEditor rewrites the options this editor did not declare it takes.
func (srv *server) forEditor(opts []sdk.SessionConfigOption) []sdk.SessionConfigOption {
	if opts == nil || srv.caps.booleanOptions.Load() {
		return opts
	}
	out := slices.Clone(opts)
	for i, o := range out {
		if o.Boolean != nil {
			out[i] = booleanAsSelect(o.Boolean)
		}
	}
	return out
}

// booleanAsSelect is a boolean option as a select of true and false.
func booleanAsSelect(b *sdk.SessionConfigOptionBoolean) sdk.SessionConfigOption {
	vals := sdk.SessionConfigSelectOptionsUngrouped{
		{Name: "On", Value: selectTrue},
		{Name: "Off", Value: selectFalse},
	}
	cur := sdk.SessionConfigValueId(selectFalse)
	if b.CurrentValue {
		cur = selectTrue
	}
	o := sdk.NewSessionConfigOptionSelect(cur, sdk.SessionConfigSelectOptions{Ungrouped: &vals})
	o.Select.Id, o.Select.Name, o.Select.Description, o.Select.Meta = b.Id, b.Name, b.Description, b.Meta
	if b.Category != nil {
		o.Select.Category = b.Category
	}
	return o
}

// shownUpdate is an update as this editor may be sent it: the config
// options of a config_option_update as shownOptions has them.
func (s *session) shownUpdate(u sdk.SessionUpdate) sdk.SessionUpdate {
	if u.ConfigOptionUpdate == nil {
		return u
	}
	var a acp.AgentSetup // the model list, without emitMu (send may run under it)
	if last := s.lastSetup.Load(); last != nil {
		a = *last
	}
	a.ConfigOptions = u.ConfigOptionUpdate.ConfigOptions
	opts := s.optionsShown(a)
	if opts == nil {
		opts = []sdk.SessionConfigOption{}
	}
	return sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: opts, Meta: u.ConfigOptionUpdate.Meta}}
}
