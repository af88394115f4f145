package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// Sources of a setup_changed event.
const (
	SetupFromStart = "start" // set on start or fork
	SetupFromSet   = "set"   // kandev set
	SetupFromAgent = "agent" // the agent reported it (current_mode_update, config_option_update)
)

// SetupChangedEvent is the setup_changed event of a session whose setup is
// now s: only names, never an MCP server's definition.
func SetupChangedEvent(source string, s *state.Setup, applied, missing []string) *state.Event {
	data, _ := json.Marshal(struct {
		Setup   *state.Setup `json:"setup"`
		Applied []string     `json:"applied,omitempty"`
		Missing []string     `json:"not_offered,omitempty"`
	}{s, applied, missing})
	return &state.Event{Type: state.EventSetupChanged, Source: source, Summary: setup.Describe(s), Data: data}
}

// mcpServers are the session's MCP servers as the agent is given them,
// ${VAR} references expanded from kandev's environment now; a reference
// to a variable that is not set is said in a warning marker.
func (o *owner) mcpServers() []sdk.McpServer {
	out, missing := setup.Expand(o.s.MCPConfig, nil)
	if len(missing) > 0 {
		o.marker(history.MarkerSetupNotOffered, fmt.Sprintf("MCP servers: %s not set in kandev's environment; passed empty to the agent (set %s and resume to pass it).", "${"+strings.Join(missing, "}, ${")+"}", strings.Join(missing, ", ")), "")
	}
	return out
}

// applySetup makes the restored agent match the recorded setup: each step
// Reconcile finds is applied with the agent's own method, and what the
// agent does not offer (or refuses) gets a warning marker naming it. It
// returns what it applied, for agent_started.
func (o *owner) applySetup(ctx context.Context) []string {
	steps, missing := setup.Reconcile(o.s.Setup, o.conn.Offered())
	applied, refused := o.applySteps(ctx, steps)
	o.notOffered(append(missing, refused...))
	return applied
}

// applySteps applies steps in order; refused names those the agent refused.
func (o *owner) applySteps(ctx context.Context, steps []setup.Step) (applied, refused []string) {
	if len(steps) == 0 {
		return nil, nil
	}
	hctx, cancel := context.WithTimeout(ctx, o.handshakeTimeout())
	defer cancel()
	for _, st := range steps {
		name := stepName(st)
		if err := o.conn.ApplySetup(hctx, o.s.ResumeToken, st); err != nil {
			refused = append(refused, fmt.Sprintf("%s (the agent answered: %s)", name, describeErr(err)))
			continue
		}
		applied = append(applied, name)
	}
	return applied, refused
}

func stepName(st setup.Step) string {
	if st.Kind == setup.StepOption {
		return "option " + st.Key + "=" + st.Value
	}
	return st.Kind + " " + st.Value
}

// notOffered records one warning marker naming what the agent does not take.
func (o *owner) notOffered(what []string) {
	if len(what) == 0 {
		return
	}
	o.marker(history.MarkerSetupNotOffered, "The agent does not take the session's "+strings.Join(what, "; ")+"; it goes on with its own.", "")
}

// serveSet applies a kandev set queued for this live owner: recorded, then
// applied to the agent at once, then logged.
func (o *owner) serveSet(ctx context.Context, in state.Input) {
	var c setup.Change
	if json.Unmarshal([]byte(in.Text), &c) != nil {
		o.consume(in)
		return
	}
	o.update(func(s *state.Session) { s.Setup = setup.Apply(s.Setup, c) })
	var applied, missing []string
	if o.conn != nil {
		steps, off := setup.Reconcile(o.s.Setup, o.conn.Offered())
		var refused []string
		applied, refused = o.applySteps(ctx, steps)
		missing = append(off, refused...)
		o.notOffered(missing)
	}
	o.append(true, SetupChangedEvent(SetupFromSet, o.s.Setup, applied, missing))
	o.consume(in)
}

// recordSet takes a kandev set left in the inbox by a previous owner into
// the record: the agent is not running yet, the restore applies it.
func (o *owner) recordSet(in state.Input) {
	var c setup.Change
	if json.Unmarshal([]byte(in.Text), &c) != nil {
		return
	}
	o.update(func(s *state.Session) { s.Setup = setup.Apply(s.Setup, c) })
	o.append(true, SetupChangedEvent(SetupFromSet, o.s.Setup, nil, nil))
}

// noteAgentSetup records the changes the agent reports itself in a batch
// of its updates (current_mode_update, config_option_update): they become
// the session's setup and are logged. Runs on the recorder goroutine.
func (o *owner) noteAgentSetup(evs []*state.Event) {
	for _, e := range evs {
		if e.Type != state.EventAgentUpdate {
			continue
		}
		mode, opts := "", map[string]setup.Option(nil)
		switch gjson.GetBytes(e.Data, "sessionUpdate").String() {
		case "current_mode_update":
			mode = gjson.GetBytes(e.Data, "currentModeId").String()
		case "config_option_update":
			var u sdk.SessionConfigOptionUpdate
			if json.Unmarshal(e.Data, &u) != nil {
				continue
			}
			opts = setup.OptionsOf(u.ConfigOptions)
		default:
			continue
		}
		o.conn.noteReported(mode, opts)
		next, changed := setup.Reported(o.session().Setup, mode, opts)
		if !changed {
			continue
		}
		o.update(func(s *state.Session) { s.Setup = next })
		o.append(true, SetupChangedEvent(SetupFromAgent, next, nil, nil))
	}
}

// SetResult is what kandev set did.
type SetResult struct {
	Setup  *state.Setup `json:"setup"`
	Queued bool         `json:"queued"` // a live owner applies it; false: recorded for the next launch
}

// SetSetup changes a session's setup: a live owner gets it through the
// inbox and applies it at once; otherwise it is recorded (and logged) and
// the next launch applies it.
func SetSetup(h *state.Home, id string, c setup.Change) (*SetResult, error) {
	if c.Empty() {
		return nil, &setup.Error{Msg: "nothing to set: give --model, --mode or --set KEY=VALUE"}
	}
	lock, err := h.AcquireOwner(id)
	if errors.Is(err, state.ErrOwnerBusy) {
		b, _ := json.Marshal(c)
		if err := h.Enqueue(id, &state.Input{Kind: state.InputSet, Text: string(b)}); err != nil {
			return nil, err
		}
		s, err := h.LoadSession(id)
		if err != nil {
			return nil, err
		}
		return &SetResult{Setup: setup.Apply(s.Setup, c), Queued: true}, nil
	}
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := h.UpdateSession(id, func(s *state.Session) error { s.Setup = setup.Apply(s.Setup, c); return nil })
	if err != nil {
		return nil, err
	}
	log, _, err := h.OpenLog(id, state.OpenLogOptions{Redact: history.RedactEvent})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	if err := log.AppendSync(SetupChangedEvent(SetupFromSet, s.Setup, nil, nil)); err != nil {
		return nil, err
	}
	return &SetResult{Setup: s.Setup}, nil
}
