package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// Delivery is what Dial did with what a command asked.
type Delivery struct {
	Result  *Result
	Queued  bool   // the prompt went through the inbox of a live owner
	InputID string // its inbox id when queued
	// Resolution is how the owner resolved the request an answer named
	// (FollowsAnswer).
	Resolution *Resolution
}

// deliver sends job.Prompt. With no live owner and nothing queued this
// process becomes the owner (Run). Otherwise the prompt is queued in
// the session's inbox, behind what is already there, carrying the sender's
// choices (its permission mode, its --linger); with no live owner this
// process then serves the inbox as its owner. When follow is set, the log
// is followed until the turn that serves it ends: that turn's events are
// emitted as if it ran here and its stop reason decides the error. If the
// owner dies first, deliver takes over as owner, so a queued input is never
// stranded.
func deliver(ctx context.Context, job Job, follow bool) (*Delivery, error) {
	if err := costCapped(job); err != nil {
		return nil, err
	}
	if err := refuseQueuedLinger(job); err != nil {
		return nil, err
	}
	if job.Detach != nil {
		return deliverDetached(ctx, job, follow)
	}
	h := job.Home
	if !inboxPending(h, job.SessionID) {
		own := &inputTurn{user: true}
		emit := job.Emit
		here := job
		here.Emit = func(e eventlog.Event) {
			if emit != nil {
				emit(e)
			}
			own.see0(e)
		}
		res, err := run(ctx, here)
		if !errors.Is(err, state.ErrOwnerBusy) {
			handOver(ctx, job)
			if err == nil && own.ended {
				err = own.err(job.SessionID)
			}
			return &Delivery{Result: res}, err
		}
	}
	from := eventlog.Size(h.LogPath(job.SessionID))
	in := PromptInput(job)
	in.Unattended = !follow // nobody follows it: [limits] treats it as unattended work
	if err := h.Enqueue(job.SessionID, in); err != nil {
		return nil, err
	}
	d := &Delivery{Queued: true, InputID: in.ID}
	t := &inputTurn{inputID: in.ID, emit: job.Emit, warn: job.Warn, afterDeath: true, ask: askParked(ctx, job)}
	sayQueued(job)
	if reachNow(job, FollowsInput, false) == ReachHere {
		// Queued behind inputs nobody serves: serve them, in order, here.
		d.Queued = false
		return deliverFollow(ctx, job, d, t, from)
	}
	if !follow {
		return d, nil
	}
	return deliverFollow(ctx, job, d, t, from)
}

// heldForLimit reports a session whose unattended work waits for the
// agent's usage window to reset: nothing is served for it before then
// (kandev recover serves it after).
func heldForLimit(h *state.Home, id string) bool {
	s, err := h.LoadSession(id)
	return err == nil && s.Limit != nil && s.Limit.Held && !verdict.LimitLifted(s.Limit, time.Now())
}

// inboxPending reports queued prompts past the served offset.
func inboxPending(h *state.Home, id string) bool {
	s, err := h.LoadSession(id)
	return err == nil && h.PendingInputs(s) > 0
}

// refuseQueuedLinger refuses a prompt with an explicit --linger for a live
// owner that cannot linger for it (LingerRefusal).
func refuseQueuedLinger(job Job) error {
	if job.Queued.Linger == nil || *job.Queued.Linger == 0 {
		return nil // --linger 0 asks nothing a foreground owner does not do
	}
	if alive, _ := job.Home.OwnerAlive(job.SessionID); !alive {
		return nil
	}
	s, err := job.Home.LoadSession(job.SessionID)
	if err != nil {
		return err
	}
	if msg := LingerRefusal(s, true); msg != "" {
		return fmt.Errorf("%w: %s", state.ErrOwnerBusy, msg)
	}
	return nil
}

// handOver makes sure inputs left in the inbox when this process stops
// owning the session have an owner: when none runs, a detached one is
// started to serve them (a --no-follow prompt has nobody else to).
func handOver(ctx context.Context, job Job) {
	if !inboxPending(job.Home, job.SessionID) || ctx.Err() != nil || job.Serve == nil || heldForLimit(job.Home, job.SessionID) {
		return
	}
	job.Detach, job.OwnInput = job.Serve, ""
	if err := ensure(ctx, job); err != nil && job.Warn != nil {
		job.Warn(fmt.Sprintf("queued inputs of session %s wait for an owner: %v (kandev resume %s serves them)", job.SessionID, err, job.SessionID))
	}
}

// deliverFollow follows the log from offset from until the turn t picks
// ends, taking over as owner here whenever the owner dies first.
func deliverFollow(ctx context.Context, job Job, d *Delivery, t *inputTurn, from int64) (*Delivery, error) {
	h := job.Home
	var err error
	for {
		from, err = eventlog.Follow(ctx, h.LogPath(job.SessionID), from, t.see, func() bool {
			alive, _ := h.OwnerAlive(job.SessionID)
			return !alive || t.noFollowUp(h, job.SessionID)
		})
		if t.ended {
			break
		}
		if err == nil && t.noFollowUp(h, job.SessionID) {
			return d, cutOffError(h, job.SessionID, t)
		}
		if err != nil {
			if ctx.Err() != nil {
				return d, leaveTurn(ctx, job, t, from)
			}
			return d, err
		}
		// The owner is gone before our turn ended: take over and serve the inbox.
		job.Prompt, job.OwnInput = "", t.inputID
		job.Emit = t.see0
		res, err := run(ctx, job)
		if errors.Is(err, state.ErrOwnerBusy) {
			continue // someone else took over first: keep following
		}
		handOver(ctx, job)
		d.Result = res
		if t.ended || err != nil {
			if err == nil {
				err = t.err(job.SessionID)
			}
			return d, err
		}
		if t.awaiting { // this owner served everything: no follow-up comes
			return d, cutOffError(h, job.SessionID, t)
		}
		from = eventlog.Size(h.LogPath(job.SessionID))
	}
	awaitClaimGivenUp(ctx, job)
	d.Result = &Result{Session: settledSession(ctx, h, job.SessionID, t), StopReason: t.stop}
	t.causeFrom(d.Result.Session)
	return d, t.err(job.SessionID)
}

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
