package acp

import (
	"context"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/setup"
)

// mcpServers is never null on the wire: ACP requires the list.
func (c *Conn) mcpServers() []sdk.McpServer {
	if c.opts.MCPServers == nil {
		return []sdk.McpServer{}
	}
	return c.opts.MCPServers
}

// Offered is the setup the agent answered its last session/new, load or
// resume with (empty lists: it offers none of that kind).
func (c *Conn) Offered() setup.Offered {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	return c.offered
}

// AgentSetup is the agent's own account of its setup, in ACP's types: the
// modes, models and config options it answered its last session/new, load
// or resume with, with their current values kept up to date as kandev
// changes them and as the agent reports changes. An editor is shown it.
type AgentSetup struct {
	Modes *sdk.SessionModeState
	// Models is a model list outside the config options (legacy_models.go),
	// ModelNames their display names.
	Models        *setup.Models
	ModelNames    map[string]string
	ConfigOptions []sdk.SessionConfigOption
}

// Answer is a copy of the agent's setup as it is now.
func (c *Conn) Answer() AgentSetup {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	return c.answer.clone()
}

func (a AgentSetup) clone() AgentSetup {
	out := AgentSetup{ConfigOptions: cloneOptions(a.ConfigOptions)}
	if a.Modes != nil {
		m := *a.Modes
		m.AvailableModes = slices.Clone(a.Modes.AvailableModes)
		out.Modes = &m
	}
	if a.Models != nil {
		m := *a.Models
		m.Available = slices.Clone(a.Models.Available)
		out.Models = &m
	}
	out.ModelNames = a.ModelNames
	return out
}

// cloneOptions copies options deep enough that setting a current value on
// the copy leaves the original alone.
func cloneOptions(opts []sdk.SessionConfigOption) []sdk.SessionConfigOption {
	if opts == nil {
		return nil
	}
	out := make([]sdk.SessionConfigOption, len(opts))
	for i, o := range opts {
		if o.Select != nil {
			sel := *o.Select
			o.Select = &sel
		}
		if o.Boolean != nil {
			b := *o.Boolean
			o.Boolean = &b
		}
		out[i] = o
	}
	return out
}

// answered keeps an agent's answer to session/new, load or resume.
func (c *Conn) answered(modes *sdk.SessionModeState, opts []sdk.SessionConfigOption) {
	models := c.takeLegacyModels()
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	c.offered = setup.OfferedBy(modes, models, opts)
	c.answer = AgentSetup{Modes: modes, Models: models, ModelNames: c.legacyNames, ConfigOptions: opts}.clone()
}

// setCurrentOption sets option key's current value in opts.
func setCurrentOption(opts []sdk.SessionConfigOption, key, value string) {
	for i := range opts {
		switch {
		case opts[i].Select != nil && string(opts[i].Select.Id) == key:
			opts[i].Select.CurrentValue = sdk.SessionConfigValueId(value)
		case opts[i].Boolean != nil && string(opts[i].Boolean.Id) == key:
			opts[i].Boolean.CurrentValue = value == "true"
		}
	}
}

func (c *Conn) setOffered(fn func(*setup.Offered)) {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	fn(&c.offered)
}

// ApplySetup applies one step with the method the agent offers for it:
// session/set_mode, session/set_model, session/set_config_option.
func (c *Conn) ApplySetup(ctx context.Context, token string, st setup.Step) error {
	id := sdk.SessionId(token)
	var err error
	switch st.Kind {
	case setup.StepMode:
		_, err = c.sdk.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: sdk.SessionModeId(st.Value)})
		if err == nil {
			c.setOffered(func(o *setup.Offered) { o.Mode = st.Value })
			c.setAnswer(func(a *AgentSetup) {
				if a.Modes != nil {
					a.Modes.CurrentModeId = sdk.SessionModeId(st.Value)
				}
			})
		}
	case setup.StepModel:
		err = c.setLegacyModel(ctx, token, st.Value)
		if err == nil {
			c.setOffered(func(o *setup.Offered) { o.Model = st.Value })
			c.setAnswer(func(a *AgentSetup) {
				if a.Models != nil {
					a.Models.Current = st.Value
				}
			})
		}
	case setup.StepOption:
		var req sdk.SetSessionConfigOptionRequest
		if st.Boolean {
			req.Boolean = &sdk.SetSessionConfigOptionBoolean{SessionId: id, ConfigId: sdk.SessionConfigId(st.Key), Type: "boolean", Value: st.Value == "true"}
		} else {
			req.ValueId = &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: sdk.SessionConfigId(st.Key), Value: sdk.SessionConfigValueId(st.Value)}
		}
		var resp sdk.SetSessionConfigOptionResponse
		resp, err = c.sdk.SetSessionConfigOption(ctx, req)
		if err == nil {
			c.setOffered(func(o *setup.Offered) {
				switch {
				case resp.ConfigOptions != nil:
					o.Options = setup.OptionsOf(resp.ConfigOptions)
				case o.Options != nil:
					opt := o.Options[st.Key]
					opt.Current = st.Value
					o.Options[st.Key] = opt
				}
			})
			c.setAnswer(func(a *AgentSetup) {
				if resp.ConfigOptions != nil {
					a.ConfigOptions = cloneOptions(resp.ConfigOptions)
				} else {
					setCurrentOption(a.ConfigOptions, st.Key, st.Value)
				}
			})
		}
	}
	return c.wrap(ctx, err)
}

// NoteReported keeps what the agent reported itself, so a later step is
// compared with the agent as it is.
func (c *Conn) NoteReported(mode string, raw []sdk.SessionConfigOption) {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	if mode != "" {
		c.offered.Mode = mode
		if c.answer.Modes != nil {
			c.answer.Modes.CurrentModeId = sdk.SessionModeId(mode)
		}
	}
	if raw != nil {
		c.offered.Options = setup.OptionsOf(raw)
		c.answer.ConfigOptions = cloneOptions(raw)
	}
}

func (c *Conn) setAnswer(fn func(*AgentSetup)) {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	fn(&c.answer)
}
