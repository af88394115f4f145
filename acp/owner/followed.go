package owner

// The turn a follower follows: which events of the log belong to it
// (a queued input's turn, the initial turn, or the follow-up of one cut
// off), how it ended, and the error its owner would have returned.

import (
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// err is what the owner of the followed turn would have returned: parked,
// an agent failure, a person's cancel (exit 130, from whichever process), a SIGTERM
// of its owner (143), or an owner that died.
func (t *inputTurn) err(id string) error {
	if t.parked {
		return waitingError(id, t.question)
	}
	switch t.stop {
	case eventlog.StopError:
		if !t.agentFault {
			// Nothing blames the agent: the owner failed to write (a full disk).
			cause := t.cause
			if cause == "" {
				cause = "it could not write the session"
			}
			return fmt.Errorf("%w: the owner of session %s ended the turn: %s", ErrStorage, id, cause)
		}
		return fmt.Errorf("%w: the turn ended with %s (see kandev events)", ErrAgentFailed, t.stop)
	case eventlog.StopProcessExit:
		return fmt.Errorf("%w: the turn ended with %s (see kandev events)", ErrAgentFailed, t.stop)
	case eventlog.StopCancelled, eventlog.StopUserCanceled:
		if t.stop == eventlog.StopCancelled && !t.cancelled {
			// The agent ended its own turn so (Codex aborts on a denied
			// command): nobody interrupted it, and the owner that ran it
			// returns no error either.
			return nil
		}
		return personCancelled(id, t.stop)
	case eventlog.StopShutdown:
		if t.terminated {
			return fmt.Errorf("%w: the owner of session %s was terminated (SIGTERM) during the turn; kandev resume %s continues it", ErrShutdown, id, id)
		}
		return fmt.Errorf("the owner died during the turn; run kandev resume to continue it")
	case eventlog.StopTakenOver:
		return followedTakenOver(id, t.cause)
	case state.StopRateLimited:
		return fmt.Errorf("%w: the turn ended with rate_limited (kandev status shows when the limit resets)", acp.ErrRateLimited)
	}
	return nil
}

// inputTurn picks the events of the turn that serves one inbox input (or
// the initial turn). A deferred permission request in it ends the
// following, parked: the owner keeps the turn open.
type inputTurn struct {
	inputID string
	initial bool
	user    bool // the first turn from the user's own prompt (source user)
	// followUpOf: the turn followed is the follow-up (continuation, or
	// message sent again) of this interrupted turn, which a resume runs.
	followUpOf string
	// idle, when set, reports that the owner has nothing left to run for
	// the turn followed (it will not start): a wait for its end stops.
	idle func() bool
	// continues: when the turn is cut off (shutdown), its follow-up (the one
	// continuation, or the message sent again) is followed as its answer.
	continues bool
	// afterDeath: a turn cut off by its owner's death (not by a SIGTERM,
	// which is the user's exit 143) is followed into its follow-up, which
	// whoever takes the session over runs, so the command that finds it
	// shows it instead of asking the user to resume.
	afterDeath bool
	awaiting   bool   // the turn was cut off; its follow-up has not started yet
	cutTurn    string // the turn that was cut off
	// restored: an owner restored the agent after the cut, so its plan for
	// the cut-off turn (continue it, pause, or not) is made.
	restored bool
	turnID   string
	steered  bool // the input joined turnID, which serves another input (steer.go)
	ended    bool
	// tail: the turn ended; the state it leaves the session in, written with
	// its turn_ended, is shown next, as the turn's owner shows it.
	tail     bool
	parked   bool
	question bool // what is parked is the agent's question
	// terminated: its owner was stopped by SIGTERM during the turn.
	terminated bool
	// cancelled: a person cancelled the turn (Ctrl-C, kandev cancel, stop,
	// close --now: the owner's prompt_cancel marker), not the agent itself.
	cancelled bool
	// agentFault: a marker of the turn blames the agent (its death, its
	// error, its silence); a turn ended "error" without one failed a write.
	agentFault bool
	// cause is the record's error_message once the turn ended.
	cause string
	// warn says, once, that an ask-mode request of the turn was denied by
	// an owner with no terminal to ask on (nil: say nothing).
	warn   func(string)
	warned bool
	// ask asks this command's person about a request parked for it and
	// queues the answer (askParked); nil: a parked request ends the
	// following (defer's exit 7).
	ask  func(eventlog.Event)
	stop string
	emit func(eventlog.Event)
}

func (t *inputTurn) see(e eventlog.Event) bool {
	if t.tail {
		t.tail = false
		if e.Type == eventlog.EventState && e.TurnID == t.turnID && t.emit != nil {
			t.emit(e)
		}
		return false
	}
	t.see0(e)
	return !t.ended || t.tail
}

func (t *inputTurn) see0(e eventlog.Event) {
	if t.user && t.turnID != "" && e.Type == eventlog.EventTurnStarted && t.picks(e) {
		// The user's prompt is the last user turn the owner runs (a
		// re-sent interrupted message may come first): follow the newest.
		*t = inputTurn{user: true, continues: t.continues, emit: t.emit, warn: t.warn, ask: t.ask}
	}
	if t.awaiting && e.Type == eventlog.EventAgentStarted {
		t.restored = true
	}
	if t.turnID == "" && e.Type == eventlog.EventMarker && e.Kind == string(history.MarkerSetupNotOffered) {
		// The agent started for this input could not take the setup kandev
		// set recorded: said here, as the owner in this command says it.
		t.notOffered(e)
	}
	if t.turnID == "" {
		if t.starts(e) {
			t.turnID, t.awaiting = e.TurnID, false
			t.steered = steeredInto(e, t.inputID)
		} else {
			return
		}
	}
	if e.TurnID != t.turnID || t.ended {
		return
	}
	if t.emit != nil {
		t.emit(e)
	}
	switch {
	case e.Type == eventlog.EventTurnEnded && e.StopReason == eventlog.StopShutdown && (t.continues || t.afterDeath && !t.terminated):
		if t.afterDeath && t.warn != nil {
			t.warn(fmt.Sprintf("the kandev process running turn %s died before the turn ended; its one automatic continuation follows", e.TurnID))
		}
		t.turnID, t.awaiting, t.cutTurn, t.restored = "", true, e.TurnID, false
	case e.Type == eventlog.EventTurnEnded:
		t.ended, t.stop = true, e.StopReason
		t.tail = e.StopReason != eventlog.StopShutdown // a cut turn leaves no state line of its own
	case e.Type == eventlog.EventPermissionRequest && e.Deferred && t.ask != nil:
		t.ask(e)
	case e.Type == eventlog.EventPermissionRequest && e.Deferred:
		t.ended, t.parked, t.question = true, true, e.ToolKind == ToolKindQuestion
	case e.Type == eventlog.EventMarker && e.Kind == string(history.MarkerPromptInterrupted):
		t.terminated = true
	case e.Type == eventlog.EventMarker && e.Kind == string(history.MarkerPromptCancel):
		t.cancelled = true
	case e.Type == eventlog.EventMarker && agentFaultMarkers[history.MarkerKind(e.Kind)]:
		t.agentFault = true
	case e.Type == eventlog.EventPermissionResolved && t.warn != nil && !t.warned && deniedUnasked(e):
		t.warned = true
		if e.ToolKind == ToolKindQuestion {
			t.warn(AskDeclinedAdvice(e.ToolName))
		} else {
			t.warn(AskDeniedAdvice(e.ToolName))
		}
	}
}

// notOffered shows a setup_not_offered marker written before the followed turn.
func (t *inputTurn) notOffered(e eventlog.Event) {
	switch {
	case t.emit != nil:
		t.emit(e)
	case t.warn != nil:
		t.warn(e.Summary)
	}
}

// AskDeniedAdvice is the one line that says a request was denied because
// --permissions ask found no terminal to ask on, and how to approve.
func AskDeniedAdvice(title string) string {
	return fmt.Sprintf("denied %s: --permissions ask needs a terminal on stdin; to approve without asking, run with --permissions approve-all (or approve-reads), or set [permissions] mode; or use --permissions defer and answer with kandev approve", title)
}

// AskDeclinedAdvice is the one line that says an agent's question was
// declined because --permissions ask found no terminal to ask on.
func AskDeclinedAdvice(question string) string {
	return fmt.Sprintf("declined the agent's question %q: --permissions ask needs a terminal on stdin; to answer from a script, run with --permissions defer and answer with kandev answer", question)
}

// agentFaultMarkers are the markers an owner writes when the agent failed a turn.
var agentFaultMarkers = map[history.MarkerKind]bool{
	history.MarkerAgentFailure: true, history.MarkerProviderFailure: true,
	history.MarkerAuthRequired: true, history.MarkerPromptTimeout: true,
}

// picks reports whether turn_started e begins the turn t follows.
func (t *inputTurn) picks(e eventlog.Event) bool {
	switch {
	case t.followUpOf != "":
		return e.InputID == "" && (e.Source == eventlog.SourceContinuation || e.Source == eventlog.SourceUser || e.Source == eventlog.SourceQueued)
	case t.initial:
		return e.Source == eventlog.SourceInitial
	case t.user:
		return e.Source == eventlog.SourceUser
	}
	return e.InputID == t.inputID
}

// causeFrom keeps the error the owner recorded for the ended turn.
func (t *inputTurn) causeFrom(s *state.Session) {
	if s != nil && t.ended {
		t.cause = s.ErrorMessage
	}
}

// deniedUnasked reports a permission_resolved that denied a request of an
// ask-mode turn without asking anyone: its owner has no terminal.
func deniedUnasked(e eventlog.Event) bool {
	var d struct {
		Unasked bool `json:"unasked"`
	}
	return json.Unmarshal(e.Data, &d) == nil && d.Unasked
}

// starts reports whether e begins the followed turn: the one that serves
// the input (or the initial turn), or, once that was cut off, its
// follow-up: the continuation, or the message sent again (a queued turn
// that serves no inbox input).
func (t *inputTurn) starts(e eventlog.Event) bool {
	if steeredInto(e, t.inputID) {
		return true
	}
	if e.Type != eventlog.EventTurnStarted {
		return false
	}
	if t.awaiting {
		// A first prompt sent again is a user turn (NewPlan's resend).
		resent := eventlog.SourceQueued
		if t.initial {
			resent = eventlog.SourceUser
		}
		return e.Source == eventlog.SourceContinuation || e.Source == resent && e.InputID == ""
	}
	return t.picks(e)
}

// noFollowUp reports that the cut-off turn t awaits will get no follow-up:
// an owner restored the agent after the cut (its plan is made), runs no
// turn, and neither continued the turn nor holds it owed (paused, or
// automatic continuation off).
func (t *inputTurn) noFollowUp(h *state.Home, id string) bool {
	if !t.awaiting || !t.restored {
		return false
	}
	s, err := h.LoadSession(id)
	if err != nil || s.CurrentTurn != "" || h.PendingInputs(s) > 0 {
		return false
	}
	owed := s.Interrupted != nil && s.Interrupted.Turn == t.cutTurn
	return s.Pause != nil || !owed && s.ContinuedTurn != t.cutTurn
}

// cutOffError is the error of a command whose turn was cut off by its
// owner's death and is not followed up: paused (exit 5, the status says
// why), or not continued (automatic continuation off).
func cutOffError(h *state.Home, id string, t *inputTurn) error {
	if s, err := h.LoadSession(id); err == nil && s.Pause != nil {
		return fmt.Errorf("%w: the owner of session %s died during turn %s and its continuation is paused: %s (kandev status %s)", ErrNotResumable, id, t.cutTurn, s.Pause.Reason, id)
	}
	return fmt.Errorf("the owner of session %s died during turn %s, which is not continued (automatic continuation is off): kandev recap %s shows where it stopped; kandev prompt %s \"...\" goes on", id, t.cutTurn, id, id)
}
