package editor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// The agent's setup, both ways: the editor is answered with the agent's
// modes, models and config options (as the agent gave them, current values
// kept up to date); the editor's changes go the way kandev set's do (a live
// owner applies them at once, and they are recorded, so they survive every
// restore); a change the editor did not make itself (the agent switching
// its own mode, kandev set in a shell) reaches it as current_mode_update
// or config_option_update.

// agentSetup is what the session's agent answered, as this process's owner
// last reported it (ok false: no owner here has restored it yet).
func (s *session) agentSetup() (acp.AgentSetup, bool) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	return s.offered, s.haveOffered
}

// offeredBy is the owner's Offered: the first report (the restore) answers
// the editor's new, load or resume; a later one shows the editor what
// changed, unless it was shown already (the agent's own update passed
// through).
func (s *session) offeredBy(a acp.AgentSetup) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	first := !s.haveOffered
	s.offered, s.haveOffered = a, true
	s.lastSetup.Store(&a)
	if first {
		s.shownMode, s.shownOptions = modeOf(a), optionsKey(a.ConfigOptions)
		return
	}
	if m := modeOf(a); m != "" && m != s.shownMode {
		s.shownMode = m
		s.send(one(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(m)}}))
	}
	if k := optionsKey(a.ConfigOptions); a.ConfigOptions != nil && k != s.shownOptions {
		s.shownOptions = k
		s.send(one(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: a.ConfigOptions}}))
	}
}

// shownAlready reports whether an update the agent sent itself shows the
// editor what it was already shown; it notes what it shows otherwise.
// Called under emitMu.
func (s *session) shownAlready(u sdk.SessionUpdate) bool {
	switch {
	case u.CurrentModeUpdate != nil:
		m := string(u.CurrentModeUpdate.CurrentModeId)
		if m == s.shownMode {
			return true
		}
		s.shownMode = m
	case u.ConfigOptionUpdate != nil:
		k := optionsKey(u.ConfigOptionUpdate.ConfigOptions)
		if k == s.shownOptions {
			return true
		}
		s.shownOptions = k
	}
	return false
}

func modeOf(a acp.AgentSetup) string {
	if a.Modes == nil {
		return ""
	}
	return string(a.Modes.CurrentModeId)
}

func optionsKey(opts []sdk.SessionConfigOption) string {
	b, _ := json.Marshal(opts)
	return string(b)
}

// change applies an editor's change the way kandev set does, after
// checking it against what the agent offers (when this process knows):
// an id the agent does not offer is refused and changes nothing.
func (srv *server) change(ctx context.Context, id sdk.SessionId, c setup.Change, check func(acp.AgentSetup) error) (*session, error) {
	sess, _, err := srv.find(id)
	if err != nil {
		return nil, err
	}
	if a, ok := sess.agentSetup(); ok {
		if err := check(a); err != nil {
			return nil, err
		}
	}
	if _, err := owner.SetSetup(context.WithoutCancel(ctx), srv.opts.Home, sess.id, c); err != nil {
		if errors.Is(err, setup.ErrBadSetup) {
			return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		return nil, err
	}
	return sess, nil
}

// SetSessionMode sets the agent's mode.
func (srv *server) SetSessionMode(ctx context.Context, req sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	mode := string(req.ModeId)
	_, err := srv.change(ctx, req.SessionId, setup.Change{Mode: mode}, func(a acp.AgentSetup) error {
		if a.Modes == nil || !slices.ContainsFunc(a.Modes.AvailableModes, func(m sdk.SessionMode) bool { return string(m.Id) == mode }) {
			return notOffered("mode", mode)
		}
		return nil
	})
	return sdk.SetSessionModeResponse{}, err
}

// SetSessionConfigOption sets one config option; the answer is every
// option with its current value.
func (srv *server) SetSessionConfigOption(ctx context.Context, req sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	var id sdk.SessionId
	var key, value string
	switch {
	case req.ValueId != nil:
		id, key, value = req.ValueId.SessionId, string(req.ValueId.ConfigId), string(req.ValueId.Value)
	case req.Boolean != nil:
		id, key = req.Boolean.SessionId, string(req.Boolean.ConfigId)
		value = "false"
		if req.Boolean.Value {
			value = "true"
		}
	default:
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "a config option's value is an id or a boolean"})
	}
	if key == AgentOptionID {
		return srv.switchAgent(ctx, id, value) // agentoption.go
	}
	sess, err := srv.change(ctx, id, srv.optionChange(id, key, value), func(a acp.AgentSetup) error {
		if _, modelOption := a.PublishedOptions(); key == modelOption && modelOption != "" {
			if !slices.Contains(a.Models.Available, value) {
				return notOffered("model", value)
			}
			return nil
		}
		if opt, ok := setup.OptionsOf(a.ConfigOptions)[key]; !ok || (!opt.Boolean && !slices.Contains(opt.Values, value)) {
			return notOffered("config option", key+"="+value)
		}
		return nil
	})
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	a, _ := sess.agentSetup()
	opts := sess.optionsShown(a)
	if opts == nil {
		opts = []sdk.SessionConfigOption{}
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// optionChange is the change one config option stands for: the option of
// category model (the agent's own, or the one shown for its models list)
// sets the model, as kandev set --model does.
func (srv *server) optionChange(id sdk.SessionId, key, value string) setup.Change {
	if sess, _, err := srv.find(id); err == nil {
		if a, ok := sess.agentSetup(); ok {
			opts, _ := a.PublishedOptions()
			if setup.OptionsOf(opts)[key].Category == string(sdk.SessionConfigOptionCategoryModel) {
				return setup.Change{Model: value}
			}
		}
	}
	return setup.Change{Options: map[string]string{key: value}}
}

func notOffered(kind, what string) error {
	return sdk.NewInvalidParams(map[string]any{"error": "the agent does not offer " + kind + " " + what})
}

// editorServers reads the editor's mcpServers; a literal secret is refused.
func editorServers(servers []sdk.McpServer, from string) ([]state.MCPServer, error) {
	out, err := setup.FromACP(servers, from+" mcpServers")
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return out, nil
}

// takeServers records the MCP servers an editor gives on a load or resume
// before the agent is restored, so it is launched with them.
func (srv *server) takeServers(id string, servers []sdk.McpServer, from string) error {
	recs, err := editorServers(servers, from)
	if err != nil {
		return err
	}
	_, err = owner.AddMCPServers(srv.opts.Home, id, recs)
	return err
}
