package acp

import (
	"context"

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
		}
	case setup.StepModel:
		_, err = c.sdk.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: sdk.UnstableModelId(st.Value)})
		if err == nil {
			c.setOffered(func(o *setup.Offered) { o.Model = st.Value })
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
		}
	}
	return c.wrap(err)
}

// noteReported keeps what the agent reported itself, so a later step is
// compared with the agent as it is.
func (c *Conn) noteReported(mode string, opts map[string]setup.Option) {
	c.offeredMu.Lock()
	defer c.offeredMu.Unlock()
	if mode != "" {
		c.offered.Mode = mode
	}
	if opts != nil {
		c.offered.Options = opts
	}
}
