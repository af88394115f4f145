package editor

import (
	"context"
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp/agentswitch"
	"github.com/kandev/kandev/state"
)

// The agent behind a session, offered to the editor as one more session
// config option (a select of the installed agents): choosing another one
// is kandev switch, through the same code, so the conversation carries over.

// AgentOptionID is the id of the config option that names the agent.
const AgentOptionID = "_kandev/agent"

// agentOption is the _kandev/agent option of session id as it is now (ok
// false when its record cannot be read).
func (srv *server) agentOption(id string) (sdk.SessionConfigOption, bool) {
	s, err := srv.opts.Home.LoadSession(id)
	if err != nil {
		return sdk.SessionConfigOption{}, false
	}
	var values sdk.SessionConfigSelectOptionsUngrouped
	for _, a := range agentswitch.Agents(srv.opts.Config) {
		if a.Installed || a.Name == s.Agent {
			values = append(values, sdk.SessionConfigSelectOption{Name: a.Name, Value: sdk.SessionConfigValueId(a.Name)})
		}
	}
	desc := "The agent behind this kandev session; another one goes on with the same conversation and worktree."
	return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: AgentOptionID, Name: "Agent", Description: &desc, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(s.Agent), Options: sdk.SessionConfigSelectOptions{Ungrouped: &values},
	}}, true
}

// withAgentOption is the agent's options with the _kandev/agent option
// after them: what every answer and config_option_update shows the editor.
func (s *session) withAgentOption(opts []sdk.SessionConfigOption) []sdk.SessionConfigOption {
	own, ok := s.srv.agentOption(s.id)
	if !ok {
		return opts
	}
	return append(append([]sdk.SessionConfigOption{}, opts...), own)
}

// switchAgent is set_config_option of _kandev/agent: kandev switch of the
// session to agent to. It is refused while a turn runs (the editor's own
// prompt, or one another process runs); this process's idle owner is
// released first, and the next prompt starts the new agent. The answer is
// the options as they are now: the new agent's own are shown once it has
// started.
func (srv *server) switchAgent(ctx context.Context, id sdk.SessionId, to string) (sdk.SetSessionConfigOptionResponse, error) {
	sess, _, err := srv.find(id)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if !sess.turn.TryLock() {
		return sdk.SetSessionConfigOptionResponse{}, switchError(agentswitch.Refusal(agentswitch.Facts{SessionID: sess.id, To: to, Running: true}, agentswitch.Busy))
	}
	defer sess.turn.Unlock()
	h := srv.opts.Home
	// This process's own owner is idle between the editor's prompts (the
	// turn lock is held): Switch, under the owner lock, refuses a turn
	// another process runs.
	v, err := agentswitch.Check(h, srv.opts.Config, sess.id, to)
	if err != nil && !(errors.Is(err, state.ErrOwnerBusy) && sess.ownsAgent()) {
		return sdk.SetSessionConfigOptionResponse{}, switchError(err)
	}
	if v != agentswitch.Same {
		sess.release()
		req := agentswitch.Request{Home: h, Config: srv.opts.Config, SessionID: sess.id, To: to, Warn: func(msg string) { srv.logf("%s", msg) }}
		if _, err := agentswitch.Switch(context.WithoutCancel(ctx), req); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, switchError(err)
		}
		sess.agentSwitched()
	}
	a, _ := sess.agentSetup()
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: sess.optionsShown(a)}, nil
}

// ownsAgent reports whether this process runs the session's owner.
func (s *session) ownsAgent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.own != nil && !s.own.finished()
}

// agentSwitched forgets the old agent's setup: the new agent's is shown
// to the editor when its owner reports it.
func (s *session) agentSwitched() {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.offered.ConfigOptions, s.offered.Modes, s.offered.Models = nil, nil, nil
	s.shownOptions, s.shownMode = "", ""
	s.lastSetup.Store(nil)
}

// switchError is a refused switch as a JSON-RPC error the editor shows.
func switchError(err error) error {
	switch {
	case errors.Is(err, agentswitch.ErrBadAgent):
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	case errors.Is(err, state.ErrOwnerBusy), errors.Is(err, state.ErrLeaseHeld):
		return sdk.NewInvalidRequest(map[string]any{"error": err.Error()})
	}
	return err
}
