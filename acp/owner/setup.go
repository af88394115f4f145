package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// Sources of a setup_changed event.
const (
	SetupFromStart  = "start"  // set on start or fork
	SetupFromSet    = "set"    // kandev set
	SetupFromAgent  = "agent"  // the agent reported it (current_mode_update, config_option_update)
	SetupFromEditor = "editor" // an editor's mcpServers (kandev acp's session/load or resume)
)

// SetupChangedEvent is the setup_changed event of a session whose setup is
// now s: only names, never an MCP server's definition.
func SetupChangedEvent(source string, s *state.Setup, applied, missing []string) *eventlog.Event {
	return setupChanged(source, s, applied, missing, "")
}

// setupChanged is SetupChangedEvent for the kandev set input inputID ("" for none).
func setupChanged(source string, s *state.Setup, applied, missing []string, inputID string) *eventlog.Event {
	data, _ := json.Marshal(struct {
		Setup   *state.Setup `json:"setup"`
		Applied []string     `json:"applied,omitempty"`
		Missing []string     `json:"not_offered,omitempty"`
	}{s, applied, missing})
	return &eventlog.Event{Type: eventlog.EventSetupChanged, Source: source, Summary: setup.Describe(s), Data: data, InputID: inputID}
}

// mcpServers are the session's MCP servers as the agent is given them,
// ${VAR} references expanded from kandev's environment now; a reference
// to a variable that is not set is said in a warning marker.
func (o *owner) mcpServers() []sdk.McpServer {
	out, missing := setup.Expand(o.s.MCPConfig, nil)
	if len(missing) > 0 {
		o.marker(history.MarkerSetupNotOffered, setup.MissingSummary(missing), "")
	}
	return out
}

// applySetup makes the restored agent match the recorded setup: each step
// Reconcile finds is applied with the agent's own method, and what the
// agent does not offer (or refuses) gets a warning marker naming it. It
// returns what it applied, for agent_started.
//
// What the agent does not offer is replaced in the record by what it runs
// instead (setup.Runs), logged as a setup_changed from the agent, so status
// says what the agent runs, not what was asked.
func (o *owner) applySetup(ctx context.Context) []string {
	steps, missing := setup.Reconcile(o.s.Setup, o.conn.Offered())
	applied, refused := o.applySteps(ctx, steps)
	o.notOffered(append(missing, refused...))
	o.offeredChanged()
	if runs := setup.Runs(o.s.Setup, o.conn.Offered(), o.plan.SetupFresh); !setup.Equal(runs, o.s.Setup) {
		o.update(func(s *state.Session) { s.Setup = runs })
		o.append(true, SetupChangedEvent(SetupFromAgent, runs, nil, missing))
	}
	return applied
}

// offeredChanged gives the job the agent's setup as it is now (an editor
// shows it and answers with it).
func (o *owner) offeredChanged() {
	if o.job.Offered != nil && o.conn != nil {
		o.job.Offered(o.conn.Answer())
	}
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
			refused = append(refused, fmt.Sprintf("%s (the agent answered: %s)", name, acp.DescribeError(err)))
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
	o.marker(history.MarkerSetupNotOffered, "The agent does not take the session's "+setup.Named(o.s.Agent, what)+"; it goes on with its own.", "")
}

// serveSet applies a kandev set queued for this live owner, one item at a
// time: what the agent takes is applied and recorded, what it does not
// offer or refuses gets the warning marker and is not recorded, so the
// record (and status) says what the agent runs, not what was asked.
func (o *owner) serveSet(ctx context.Context, in state.Input) {
	var c setup.Change
	if json.Unmarshal([]byte(in.Text), &c) != nil {
		o.consume(in)
		return
	}
	if o.conn == nil {
		o.update(func(s *state.Session) { s.Setup = setup.Apply(s.Setup, c) })
		o.append(true, setupChanged(SetupFromSet, o.s.Setup, nil, nil, in.ID))
		o.consume(in)
		return
	}
	var applied, missing []string
	for _, item := range c.Items() {
		steps, off := setup.Reconcile(setup.Apply(nil, item), o.conn.Offered())
		if len(off) > 0 {
			missing = append(missing, off...)
			continue
		}
		ok, refused := o.applySteps(ctx, steps)
		if len(refused) > 0 {
			missing = append(missing, refused...)
			continue
		}
		applied = append(applied, ok...)
		now := o.conn.Offered()
		o.update(func(s *state.Session) { s.Setup = setup.Runs(setup.Apply(s.Setup, item), now, false) }) // fast=on is recorded as true
	}
	o.notOffered(missing)
	o.offeredChanged()
	o.append(true, setupChanged(SetupFromSet, o.s.Setup, applied, missing, in.ID))
	o.consume(in)
}

// setQueued reports a kandev set waiting in the inbox: an owner waiting
// for its user's next prompt (an editor's, resume -i) serves it at once.
func (o *owner) setQueued() bool {
	ins, _ := o.job.Home.ReadInbox(o.s.ID, o.s.InboxOffset)
	for _, in := range ins {
		if in.Kind == state.InputSet {
			return true
		}
	}
	return false
}

// recordSet takes a kandev set left in the inbox by a previous owner into
// the record: the agent is not running yet, the restore applies it.
func (o *owner) recordSet(in state.Input) {
	var c setup.Change
	if json.Unmarshal([]byte(in.Text), &c) != nil {
		return
	}
	o.update(func(s *state.Session) { s.Setup = setup.Apply(s.Setup, c) })
	o.append(true, setupChanged(SetupFromSet, o.s.Setup, nil, nil, in.ID))
}

// noteAgentSetup records the changes the agent reports itself in a batch
// of its updates (current_mode_update, config_option_update): they become
// the session's setup and are logged. Runs on the recorder goroutine.
func (o *owner) noteAgentSetup(evs []*eventlog.Event) {
	for _, e := range evs {
		if e.Type != eventlog.EventAgentUpdate {
			continue
		}
		mode, opts, raw := "", map[string]setup.Option(nil), []sdk.SessionConfigOption(nil)
		switch gjson.GetBytes(e.Data, "sessionUpdate").String() {
		case "current_mode_update":
			mode = gjson.GetBytes(e.Data, "currentModeId").String()
		case "config_option_update":
			var u sdk.SessionConfigOptionUpdate
			if json.Unmarshal(e.Data, &u) != nil {
				continue
			}
			raw, opts = u.ConfigOptions, setup.OptionsOf(u.ConfigOptions)
		default:
			continue
		}
		o.conn.NoteReported(mode, raw)
		o.offeredChanged()
		next, changed := setup.Reported(o.session().Setup, mode, opts)
		if !changed {
			continue
		}
		o.update(func(s *state.Session) {
			s.Setup = next
			if s.CurrentTurn != "" {
				// The agent changed itself mid-turn: the turn goes on under it, so a
				// cut-off of it is no reason to pause.
				s.TurnSetup = setup.TurnSetupOf(next)
			}
		})
		o.append(true, SetupChangedEvent(SetupFromAgent, next, nil, nil))
	}
}

// SetResult is what kandev set did.
type SetResult struct {
	Setup *state.Setup `json:"setup"`
	// Queued: a live owner got it through its inbox; Applied says whether it
	// has already served it (within SetSetup's wait), and then what it
	// applied to its agent and what the agent does not take.
	Queued     bool     `json:"queued"`
	Applied    bool     `json:"applied"`
	Steps      []string `json:"steps,omitempty"`
	NotOffered []string `json:"not_offered,omitempty"`
}

// setWait bounds how long kandev set waits for a live owner to serve the
// change: an idle (warm) owner does at once, a busy one after its turn.
const setWait = 3 * time.Second

// SetSetup changes a session's setup: a live owner gets it through the
// inbox and applies it at once (SetSetup waits a little to report what
// it applied); otherwise it is recorded (and logged) and the next launch
// applies it.
func SetSetup(ctx context.Context, h *state.Home, id string, c setup.Change) (*SetResult, error) {
	if c.Empty() {
		return nil, &setup.Error{Msg: "nothing to set: give --model, --mode or --set KEY=VALUE"}
	}
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return queueSet(ctx, h, id, c)
	}
	if err != nil {
		return nil, err
	}
	defer held.Release()
	s, err := held.Update(func(s *state.Session) error { s.Setup = setup.Apply(s.Setup, c); return nil })
	if err != nil {
		return nil, err
	}
	if err := held.Append(SetupChangedEvent(SetupFromSet, s.Setup, nil, nil)); err != nil {
		return nil, err
	}
	return &SetResult{Setup: s.Setup}, nil
}

// queueSet gives the change to the live owner and waits up to setWait for
// its setup_changed event.
func queueSet(ctx context.Context, h *state.Home, id string, c setup.Change) (*SetResult, error) {
	b, _ := json.Marshal(c)
	in := &state.Input{Kind: state.InputSet, Text: string(b)}
	changes := watch.WatchFiles(h.LogPath(id))
	defer changes.Close()
	if err := h.Enqueue(id, in); err != nil {
		return nil, err
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return nil, err
	}
	res := &SetResult{Setup: setup.Apply(s.Setup, c), Queued: true}
	deadline := time.Now().Add(setWait)
	for {
		if e, ok := setupServed(h.LogPath(id), in.ID); ok {
			var d struct {
				Setup   *state.Setup `json:"setup"`
				Applied []string     `json:"applied"`
				Missing []string     `json:"not_offered"`
			}
			_ = json.Unmarshal(e.Data, &d)
			res.Setup, res.Applied, res.Steps, res.NotOffered = d.Setup, true, d.Applied, d.Missing
			return res, nil
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return res, nil
		}
		_ = changes.Wait(ctx, min(left, 200*time.Millisecond))
	}
}

// setupServed finds the setup_changed event of input inputID, reading the
// log from its end back to the input's own turn at most.
func setupServed(path, inputID string) (eventlog.Event, bool) {
	var found eventlog.Event
	ok := false
	_, _ = eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		var e eventlog.Event
		if json.Unmarshal(line, &e) != nil {
			return true
		}
		if e.Type == eventlog.EventSetupChanged && e.InputID == inputID {
			found, ok = e, true
			return false
		}
		return e.Type != eventlog.EventAgentStarted // older than any owner that could have served it
	})
	return found, ok
}

// LogNewSetup logs a new session's setup (set on start or fork, or the
// config's defaults) before its agent ever starts: under the owner lock,
// so it never races an owner. Nothing is logged for no setup.
func LogNewSetup(h *state.Home, s *state.Session) error {
	if s.Setup == nil {
		return nil
	}
	held, err := h.Hold(s.ID, history.LogOptions)
	if err != nil {
		return err
	}
	defer held.Release()
	return held.Append(SetupChangedEvent(SetupFromStart, s.Setup, nil, nil))
}

// AddMCPServers records the MCP servers an editor gives again on a load or
// resume (added to the session's, one of the same name replaced) and logs
// the setup, so the launch that follows passes them. Nothing is done when
// they change nothing; changed is false too when another process owns the
// session (its record is that owner's to write: they apply on the launch
// after it).
func AddMCPServers(h *state.Home, id string, servers []state.MCPServer) (changed bool, err error) {
	if len(servers) == 0 {
		return false, nil
	}
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer held.Release()
	s, err := held.Update(func(s *state.Session) error {
		merged := setup.MergeServers(s.MCPConfig, servers)
		if slices.EqualFunc(merged, s.MCPConfig, sameServer) {
			return nil
		}
		changed = true
		s.MCPConfig = merged
		s.Setup = setup.WithServers(s.Setup, merged)
		return nil
	})
	if err != nil || !changed {
		return false, err
	}
	return true, held.Append(SetupChangedEvent(SetupFromEditor, s.Setup, nil, nil))
}

func sameServer(a, b state.MCPServer) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.URL == b.URL && maps.Equal(a.Headers, b.Headers)
}

// SetMCPServers makes servers the session's MCP servers, replacing those it
// had, and trusts them: they were given on this machine (kandev set --mcp).
// They reach the agent when it next starts, so a live owner refuses it.
func SetMCPServers(h *state.Home, id string, servers []state.MCPServer) (*state.Session, error) {
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return nil, fmt.Errorf("%w: session %s runs in another kandev process, whose agent has its MCP servers already: kandev close %s, then set --mcp again", state.ErrOwnerBusy, id, id)
	}
	if err != nil {
		return nil, err
	}
	defer held.Release()
	s, err := held.Update(func(s *state.Session) error {
		s.MCPConfig = servers
		s.Setup = setup.WithServers(s.Setup, servers)
		s.TrustPending = false
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, held.Append(SetupChangedEvent(SetupFromSet, s.Setup, nil, nil))
}
