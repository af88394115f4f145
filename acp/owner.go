package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// Errors RunOwner returns, mapped to exit codes by commands.
var (
	ErrAgentFailed  = errors.New("agent failure")
	ErrInterrupted  = errors.New("interrupted")
	ErrNotResumable = errors.New("not resumable")
	// ErrShutdown ends a command that was terminated (SIGTERM): its running
	// turn is left for one automatic continuation.
	ErrShutdown = errors.New("terminated")
)

// Job is one run of a session's owner: what to restore and what to send.
type Job struct {
	Home        *state.Home
	Config      *state.Config
	SessionID   string
	Profile     Profile
	Permissions string
	// Prompt is the user's message; "" restores the agent and serves what is
	// pending (initial prompt, continuation, queued inputs) only.
	Prompt string
	// NoContinue turns off the automatic continuation of an interrupted turn.
	NoContinue bool
	// Emit receives every event once it is in the log, in seq order.
	Emit func(state.Event)
	// Ask answers a permission request in ask mode; nil means deny.
	Ask func(req sdk.RequestPermissionRequest) bool
	// Progress reports start-up steps ("launching agent", ...); may be nil.
	Progress func(string)
	// Next returns the next interactive prompt (resume -i); nil for none.
	Next func() (string, bool)
	// InitialPrompt is the session's initial prompt as the user typed it
	// (the record keeps it redacted until the agent accepts it).
	InitialPrompt string
	// OwnInput is the inbox input this process queued itself: its turn is
	// emitted; turns served for other processes' inputs are not.
	OwnInput string
	// Abort is closed when the owner must stop at once (a second SIGINT or
	// SIGTERM): the agent's process group is killed without waiting.
	Abort <-chan struct{}
	// Warn reports a failure that is not this command's own (a queued input
	// of another process whose turn failed); may be nil.
	Warn func(string)
}

// Result is what the owner did.
type Result struct {
	Session        *state.Session
	Restore        RestoreMethod
	FallbackReason string
	StopReason     string // of the last turn run, "" if none
}

// RunOwner is the owner's life in one place: take the owner lock, repair an
// interrupted turn, launch the agent, restore its conversation, run the
// pending initial prompt or the user's prompt, then stop the agent and
// release the lock. ctx ending means the user interrupted (Ctrl-C): the turn
// is cancelled with session/cancel, then the agent is killed after a bound.
func RunOwner(ctx context.Context, job Job) (*Result, error) {
	lock, err := job.Home.AcquireOwner(job.SessionID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := job.Home.LoadSession(job.SessionID)
	if err != nil {
		return nil, err
	}
	if state.IsTerminal(s.State) {
		return nil, fmt.Errorf("%w: session %s is %s; start a follow-up with: kandev start --parent %s", ErrNotResumable, s.ID, s.State, s.ID)
	}
	o := &owner{job: job, s: s, res: &Result{}}
	log, torn, err := job.Home.OpenLog(s.ID, state.OpenLogOptions{Redact: history.RedactEvent})
	if err != nil {
		return nil, err
	}
	o.log = log
	defer log.Close()
	if torn > 0 {
		o.marker(history.MarkerSessionRepaired, fmt.Sprintf("Truncated a torn last log line (%d bytes) left by a crash.", torn), "")
	}
	err = o.run(ctx)
	o.shutdown()
	o.res.Session = o.s
	if werr := o.storageErr(); werr != nil {
		// What was not written was not reported either; the write error is the cause.
		err = werr
	}
	return o.res, err
}

type owner struct {
	job  Job
	s    *state.Session
	log  *state.EventLog
	res  *Result
	proc *Process
	conn *Conn

	mu        sync.Mutex
	turnID    string
	accepted  bool // the agent has answered something in the current turn
	onAccept  func()
	emitMu    sync.Mutex
	agentInfo *sdk.Implementation
	agentCaps sdk.AgentCapabilities
	acted     map[string]bool // control inputs already acted on
	cancelled atomic.Bool     // the current turn is being cancelled
	muted     atomic.Bool     // serving another process's queued input: not printed here
	// firstLaunch is set when this owner launches the session's agent for
	// the first time: a failure then leaves the session FAILED.
	firstLaunch bool

	errMu    sync.Mutex
	writeErr error // the first failed log or record write
}

// update changes the record under its lock and keeps the cached copy. A
// failed write is kept (storageErr) and stops the owner; the cached copy
// still changes, so the owner's own decisions stay consistent.
func (o *owner) update(fn func(*state.Session)) {
	s, err := o.job.Home.UpdateSession(o.s.ID, func(s *state.Session) error { fn(s); return nil })
	if err == nil {
		o.s = s
		return
	}
	fn(o.s)
	o.failWrite("the record of session "+o.s.ID, err)
}

// append writes events to the log (fsync'd when durable) and then emits them:
// nothing is shown before it is on disk. A failed write is kept
// (storageErr) and nothing of it is shown.
func (o *owner) append(durable bool, evs ...*state.Event) {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	if o.write(durable, evs...) && o.job.Emit != nil && !o.muted.Load() {
		for _, e := range evs {
			o.job.Emit(*e)
		}
	}
}

// record writes events to the log without showing them: for what the
// command reports in its own error line.
func (o *owner) record(evs ...*state.Event) {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	o.write(true, evs...)
}

// write appends under emitMu, so the log's order is the order shown.
func (o *owner) write(durable bool, evs ...*state.Event) bool {
	var err error
	if durable {
		err = o.log.AppendSync(evs...)
	} else {
		err = o.log.Append(evs...)
	}
	if err != nil {
		o.failWrite("the log of session "+o.s.ID, err)
		return false
	}
	return true
}

func (o *owner) marker(kind history.MarkerKind, summary, diag string) {
	m := history.NewMarker(kind, summary, diag)
	m.TurnID = o.currentTurn()
	o.append(true, &m)
}

func (o *owner) setState(st string) {
	if o.s.State == st {
		return
	}
	o.update(func(s *state.Session) { s.State = st; s.LastActivityAt = time.Now().UTC() })
	o.append(true, &state.Event{Type: state.EventState, State: st, TurnID: o.currentTurn()})
}

func (o *owner) currentTurn() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.turnID
}

func (o *owner) progress(msg string) {
	if o.job.Progress != nil {
		o.job.Progress(msg)
	}
}

func (o *owner) run(ctx context.Context) error {
	if o.s.State == state.StateRunning && o.s.CurrentTurn == "" {
		// A record that lagged behind a finished turn: nothing was cut off.
		o.update(func(s *state.Session) { s.State = state.StateWaitingForInput })
	}
	if o.s.CurrentTurn != "" {
		o.repairInterrupted(state.StopShutdown)
	}
	o.reconcileInbox()
	d, err := o.decideContinuation()
	if err != nil {
		return err
	}
	if err := o.start(ctx); err != nil {
		return err
	}
	if o.s.InitialPrompt != "" {
		// The record keeps the prompt redacted; the process that took it from
		// the user sends it as typed.
		text := o.s.InitialPrompt
		if o.job.InitialPrompt != "" {
			text = o.job.InitialPrompt
		}
		if err := o.turn(ctx, state.SourceInitial, text); err != nil {
			return err
		}
	}
	if d.Continue {
		if err := o.continueInterrupted(ctx, d.Turn); err != nil {
			return err
		}
	}
	if o.job.Prompt != "" {
		o.takeOverPause()
		if err := o.turn(ctx, state.SourceUser, o.job.Prompt); err != nil {
			return err
		}
	}
	if err := o.serveInbox(ctx); err != nil {
		return err
	}
	return o.interactive(ctx)
}

// interactive reads prompts from the job's Next until it reports no more
// (resume -i). While it waits for the user, inputs other processes queue are
// served at once, so a follower never waits on someone's idle terminal.
func (o *owner) interactive(ctx context.Context) error {
	if o.job.Next == nil {
		return nil
	}
	type line struct {
		text string
		ok   bool
	}
	lines := make(chan line)
	ready := make(chan struct{}, 1)
	ready <- struct{}{}
	go func() {
		// Next is called only when the previous line has been handled, so the
		// prompt sign never lands in the middle of a turn's output.
		for range ready {
			text, ok := o.job.Next()
			lines <- line{text, ok}
			if !ok {
				return
			}
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case l := <-lines:
			if !l.ok {
				return o.serveInbox(ctx)
			}
			if strings.TrimSpace(l.text) != "" {
				if err := o.turn(ctx, state.SourceUser, l.text); err != nil {
					return err
				}
			}
			if err := o.serveInbox(ctx); err != nil {
				return err
			}
			ready <- struct{}{}
		case <-tick.C:
			if o.job.Home.PendingInputs(o.s) > 0 {
				if err := o.serveInbox(ctx); err != nil {
					return err
				}
			}
		}
	}
}

// pause holds the interrupted turn back until its cause is gone or an
// operator sends a prompt.
func (o *owner) pause(p state.Pause, advice string) {
	o.update(func(s *state.Session) { s.Pause = &p })
	m := history.NewMarker(history.MarkerContinuationPaused, "Automatic continuation paused: "+p.Reason+"; "+advice+".", "")
	m.TurnID = p.Turn
	m.Data, _ = json.Marshal(map[string]string{"pause_kind": p.Kind})
	o.append(true, &m)
}

// repairInterrupted closes a turn whose owner died, by appending what
// RepairTurn decided. When the log shows the turn ended (or never began),
// only the record lagged behind and is set straight.
func (o *owner) repairInterrupted(stop string) TurnRepair {
	turn := o.s.CurrentTurn
	tr := RepairTurn(turnEvents(o.job.Home.LogPath(o.s.ID), turn), turn, stop)
	if tr.Fixes == nil {
		o.update(func(s *state.Session) {
			if tr.ClosedByShutdown && stop == state.StopShutdown && s.InitialPrompt == "" && s.Interrupted == nil {
				// A terminated owner closed the turn but its record write was lost.
				s.Interrupted = &state.Interruption{Turn: turn, PermissionOpen: tr.PermissionOpen || s.PermissionPending}
			}
			s.CurrentTurn = ""
			s.State = state.StateWaitingForInput
			s.PermissionPending = false
		})
		return tr
	}
	o.mu.Lock()
	o.turnID = turn
	o.mu.Unlock()
	o.append(true, append(tr.Fixes, &state.Event{Type: state.EventState, State: state.StateWaitingForInput, TurnID: turn})...)
	o.update(func(s *state.Session) {
		if stop == state.StopShutdown && s.InitialPrompt == "" {
			// Owed its one continuation (an unaccepted initial prompt is sent again instead).
			s.Interrupted = &state.Interruption{Turn: turn, PermissionOpen: tr.PermissionOpen || s.PermissionPending}
		}
		s.CurrentTurn = ""
		s.StopReason = stop
		s.State = state.StateWaitingForInput
		s.PermissionPending = false
	})
	o.mu.Lock()
	o.turnID = ""
	o.mu.Unlock()
	return tr
}

// start launches the agent and restores the session's conversation.
func (o *owner) start(ctx context.Context) error {
	if o.s.AgentPID != 0 {
		// The previous owner did not clean up: stop its agent and whatever that started.
		stale := KillStale(o.s.AgentPID, o.s.AgentStart)
		if n := KillSessionLeftovers(o.job.Home.Dir, o.s.ID); stale || n > 0 {
			o.marker(history.MarkerSessionRecovered, fmt.Sprintf("Stopped agent process %d and %d process(es) it started, left running by a dead owner.", o.s.AgentPID, n), "")
		}
	}
	p := o.job.Profile
	first := !o.s.AgentLaunched
	useFlag := len(p.ResumeFlag) > 0 && o.s.ResumeToken != "" && !first
	var fallback []string
	for {
		init, err := o.launch(ctx, useFlag)
		if err != nil && useFlag && o.proc != nil && o.proc.ExitedWithin(flagFastFail) {
			// The agent refused the resume flag: once more without it, with the resume context.
			fallback = append(fallback, "resume flag: agent "+o.proc.ExitDescription()+" within 2s")
			o.proc.Kill()
			useFlag = false
			o.update(func(s *state.Session) { s.PendingContext = true })
			continue
		}
		if err != nil {
			return err
		}
		if useFlag {
			err = o.restore(ctx, init, RestoreFlag, first, &fallback)
		} else {
			err = o.restore(ctx, init, RestoreNone, first, &fallback)
		}
		if err != nil {
			return err
		}
		break
	}
	data, _ := json.Marshal(map[string]any{"agent_info": o.agentInfo, "capabilities": o.agentCaps, "command": o.proc.Args, "replayed_updates": o.conn.Replayed()})
	o.append(true, &state.Event{Type: state.EventAgentStarted, PID: o.proc.PID, Restore: string(o.res.Restore), FallbackReason: o.res.FallbackReason, Data: data})
	if o.s.State == state.StateStarting {
		o.setState(state.StateWaitingForInput)
	}
	return nil
}

// flagFastFail is how soon an agent launched with its resume flag must exit
// for kandev to relaunch it without the flag (SPEC 3.2).
const flagFastFail = 2 * time.Second

// launch starts the agent process and performs initialize.
func (o *owner) launch(ctx context.Context, withFlag bool) (sdk.InitializeResponse, error) {
	p := o.job.Profile
	cmd := p.ResolvedCommand()
	if withFlag {
		for _, a := range p.ResumeFlag {
			cmd = append(cmd, strings.ReplaceAll(a, "{token}", o.s.ResumeToken))
		}
	}
	if !o.s.AgentLaunched {
		o.firstLaunch = true
	}
	o.progress("launching " + p.Name + " agent")
	proc, err := Launch(LaunchSpec{Command: cmd, Env: p.Env, Dir: o.s.Cwd, Home: o.job.Home.Dir, Hint: p.InstallHint, SessionID: o.s.ID})
	if err != nil {
		o.failStart(err)
		if o.firstLaunch {
			return sdk.InitializeResponse{}, fmt.Errorf("%w: %v; session %s is FAILED", ErrAgentFailed, err, o.s.ID)
		}
		return sdk.InitializeResponse{}, fmt.Errorf("%w: %v", ErrAgentFailed, err)
	}
	o.proc = proc
	o.update(func(s *state.Session) {
		s.AgentLaunched = true
		s.AgentPID = proc.PID
		s.AgentStart = proc.Start
		s.OwnerPID = ownPID
		s.AgentCommand = p.Command
		if s.State == state.StateCreated {
			s.State = state.StateStarting
		}
	})
	o.conn = Connect(proc, ConnOptions{Cwd: o.s.Cwd, OnEvents: o.onEvents, Permission: o.permission})
	hctx, cancel := context.WithTimeout(ctx, o.handshakeTimeout())
	defer cancel()
	o.progress("initializing agent")
	init, err := o.conn.Initialize(hctx)
	if err != nil {
		return init, o.handshakeFailed(ctx, "initialize", err)
	}
	capsJSON, _ := json.Marshal(init)
	o.agentInfo, o.agentCaps = init.AgentInfo, init.AgentCapabilities
	o.update(func(s *state.Session) { s.Capabilities = capsJSON })
	return init, nil
}

func (o *owner) handshakeTimeout() time.Duration {
	return time.Duration(o.job.Config.HandshakeTimeoutSeconds()) * time.Second
}

// restore walks the restore ladder (NextRestoreStep) until a step works or
// one fails in a way that must keep the token.
func (o *owner) restore(ctx context.Context, init sdk.InitializeResponse, forced RestoreMethod, first bool, fallback *[]string) error {
	p := o.job.Profile
	hctx, cancel := context.WithTimeout(ctx, o.handshakeTimeout())
	defer cancel()
	in := LadderInput{Caps: CapabilitiesOf(init), HasToken: o.s.ResumeToken != "" && !first, NativeResume: p.NativeResume}
	var lastErr error
	for {
		step := NextRestoreStep(in)
		if forced == RestoreFlag && in.Prev == RestoreNone {
			step = RestoreFlag
		}
		if step == RestoreFail {
			return o.handshakeFailed(ctx, "session/"+string(in.Prev), lastErr)
		}
		o.progress("restoring session (" + string(step) + ")")
		var err error
		switch step {
		case RestoreResume:
			err = o.conn.ResumeSession(hctx, o.s.ResumeToken)
		case RestoreLoad:
			err = o.conn.LoadSession(hctx, o.s.ResumeToken)
		case RestoreNew, RestoreFlag:
			var tok string
			tok, err = o.conn.NewSession(hctx)
			if err == nil {
				// A fresh agent session replacing one with history gets the resume
				// context with its next prompt (for a flag restore the agent
				// restored its own history, unless the profile asks for injection).
				inject := !first && o.s.Turns > 0 && (step == RestoreNew || p.HistoryInjection)
				o.update(func(s *state.Session) {
					s.ResumeToken = tok
					if inject {
						s.PendingContext = true
					}
				})
			}
		}
		if err == nil {
			o.res.Restore = step
			o.res.FallbackReason = strings.Join(*fallback, "; ")
			if step == RestoreResume || step == RestoreLoad {
				if p.HistoryInjection && o.s.Turns > 0 {
					o.update(func(s *state.Session) { s.PendingContext = true })
				}
			}
			return nil
		}
		if step == RestoreNew || step == RestoreFlag {
			return o.handshakeFailed(ctx, "session/new", err)
		}
		token := o.s.ResumeToken
		class := ClassifyWithList(Classify(err), in.Caps, func() (bool, error) { return o.conn.SessionListed(hctx, token) })
		*fallback = append(*fallback, fmt.Sprintf("session/%s: %s", step, describeErr(err)))
		if class == ErrUnknownSession {
			o.update(func(s *state.Session) { s.ResumeToken = "" })
			msg := "Previous agent session could not be restored (" + describeErr(err) + "); the next message starts a fresh agent session with the stored history."
			if o.s.Turns == 0 {
				msg = "Previous agent session could not be restored (" + describeErr(err) + "); it had no history, so a fresh agent session takes its place."
			}
			o.marker(history.MarkerResumeFailed, msg, "")
		}
		in.Prev, in.PrevErr, lastErr = step, class, err
	}
}

func describeErr(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.Code, re.Message)
	}
	return err.Error()
}

// failStart records a launch that never produced an agent. The marker is
// written, not shown: the command's error line says the same once. A
// session whose agent never started before ends FAILED; one that worked
// before keeps its state (and token), so the user can retry.
func (o *owner) failStart(err error) {
	m := history.NewMarker(history.MarkerAgentFailure, "Could not launch the agent: "+err.Error(), "")
	evs := []*state.Event{&m}
	if o.firstLaunch {
		evs = append(evs, &state.Event{Type: state.EventState, State: state.StateFailed})
	}
	o.record(evs...)
	o.update(func(s *state.Session) {
		s.ErrorMessage = history.Redact(err.Error())
		switch {
		case o.firstLaunch:
			s.State = state.StateFailed
		case s.State == state.StateCreated || s.State == state.StateStarting:
			s.State = state.StateWaitingForInput
		}
	})
}

// handshakeFailed ends a start-up that the agent did not complete: the
// token is kept so the user can retry.
func (o *owner) handshakeFailed(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return interruption(ctx)
	}
	msg := fmt.Sprintf("agent %s failed during %s: %s", o.job.Profile.Name, step, describeErr(err))
	if Classify(err) == ErrTimeout {
		msg = fmt.Sprintf("agent %s did not answer %s within %ds (it may be hung)", o.job.Profile.Name, step, o.job.Config.HandshakeTimeoutSeconds())
	}
	o.failStart(errors.New(msg))
	if o.firstLaunch {
		return fmt.Errorf("%w: %s; session %s is FAILED (fix the agent, then kandev start again)", ErrAgentFailed, msg, o.s.ID)
	}
	return fmt.Errorf("%w: %s; the session keeps its state, retry with kandev resume %s", ErrAgentFailed, msg, o.s.ID)
}

// onEvents runs on the connection's recorder goroutine.
func (o *owner) onEvents(evs []*state.Event) {
	turn := o.currentTurn()
	for _, e := range evs {
		e.TurnID = turn
	}
	// The agent answered: its acceptance of the prompt is recorded before
	// anything of the answer is written or shown, so a crash from here on
	// continues the turn instead of sending the prompt again.
	o.mu.Lock()
	acceptedNow := !o.accepted && turn != ""
	o.accepted = true
	fn := o.onAccept
	o.mu.Unlock()
	if acceptedNow && fn != nil {
		fn()
	}
	o.appendUpdates(evs) // usage.go: usage events also update the record's totals
}

// permission answers session/request_permission by the configured mode and
// logs the request and the answer.
func (o *owner) permission(ctx context.Context, req sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	name := ""
	if req.ToolCall.Title != nil {
		name = *req.ToolCall.Title
	}
	var kind sdk.ToolKind
	if req.ToolCall.Kind != nil {
		kind = *req.ToolCall.Kind
	}
	opts, _ := json.Marshal(req.Options)
	id := string(req.ToolCall.ToolCallId)
	// The record says "pending" before the log shows the question, and stops
	// saying it only after the answer is logged: a crash in between is
	// always seen as a pending permission.
	o.update(func(s *state.Session) { s.PermissionPending = true })
	o.conn.Barrier(func() {
		o.append(true, &state.Event{Type: state.EventPermissionRequest, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, ToolKind: string(kind), Data: opts})
	})
	mode := o.job.Permissions
	if mode == PermAsk {
		mode = PermDenyAll
		if o.job.Ask != nil && o.job.Ask(req) {
			mode = PermApproveAll
		}
	}
	optionID, allowed := DecidePermission(mode, kind, req.Options)
	if ctx.Err() != nil || o.cancelled.Load() {
		optionID, allowed = "", false
	}
	outcome := "cancelled"
	if optionID != "" {
		outcome = "selected"
	}
	data, _ := json.Marshal(map[string]any{"outcome": outcome, "option_id": optionID, "allowed": allowed, "mode": o.job.Permissions})
	o.conn.Barrier(func() {
		o.append(true, &state.Event{Type: state.EventPermissionResolved, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, Content: outcome + " " + optionID, Data: data})
	})
	o.update(func(s *state.Session) { s.PermissionPending = false })
	return PermissionAnswer(optionID)
}

// turn runs one prompt turn to its end.
func (o *owner) turn(ctx context.Context, source, text string) error {
	return o.turnFor(ctx, source, text, nil)
}

// turnFor runs a turn that serves inbox input in (nil for none): the input
// counts as served once its turn_started is on disk.
func (o *owner) turnFor(ctx context.Context, source, text string, in *state.Input) error {
	turnID := fmt.Sprintf("t%d", o.s.Turns+1)
	inputID := ""
	if in != nil {
		inputID = in.ID
	}
	sent := text
	// An initial prompt carries context only for a child of another session.
	carriesContext := o.s.PendingContext && (source != state.SourceInitial || o.s.ParentID != "")
	if carriesContext {
		sent = o.resumeContext(text)
	}
	o.cancelled.Store(false)
	o.mu.Lock()
	o.turnID, o.accepted = turnID, false
	o.onAccept = func() {
		o.update(func(s *state.Session) {
			if source == state.SourceInitial {
				s.InitialPrompt = ""
			}
			if carriesContext {
				s.PendingContext = false
			}
		})
	}
	o.mu.Unlock()
	o.update(func(s *state.Session) {
		s.Turns++
		s.CurrentTurn = turnID
		s.StopReason = ""
		s.ErrorMessage = ""
		s.State = state.StateRunning
		s.LastActivityAt = time.Now().UTC()
	})
	o.append(true,
		&state.Event{Type: state.EventTurnStarted, TurnID: turnID, Source: source, InputID: inputID},
		&state.Event{Type: state.EventUserMessage, TurnID: turnID, Role: "user", Content: text},
		&state.Event{Type: state.EventState, TurnID: turnID, State: state.StateRunning},
	)
	if in != nil {
		o.consume(*in)
	}
	if err := o.storageErr(); err != nil {
		// The turn is not on disk as it should be: it is not sent.
		o.endTurn(turnID, state.StopError, err)
		return err
	}

	stop, err := o.prompt(ctx, sent)
	if err == nil {
		o.mu.Lock()
		fn := o.onAccept
		already := o.accepted
		o.accepted = true
		o.mu.Unlock()
		if !already && fn != nil {
			fn()
		}
	}
	o.res.StopReason = stop
	o.endTurn(turnID, stop, err)
	return err
}

// prompt sends the turn and waits for its end, the agent's death, the idle
// timeout or the user's interrupt.
func (o *owner) prompt(ctx context.Context, text string) (string, error) {
	type answer struct {
		stop string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		stop, err := o.conn.Prompt(context.Background(), o.s.ResumeToken, text)
		done <- answer{stop, err}
	}()
	idle := time.Duration(o.job.Config.IdleTimeoutSeconds()) * time.Second
	grace := time.Duration(o.job.Config.CancelGraceSeconds()) * time.Second
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	// cancelAndWait sends session/cancel and waits a bounded time for the
	// agent to end the turn, then kills it; an abort kills it at once.
	cancelAndWait := func() {
		o.cancelled.Store(true)
		_ = o.conn.Cancel(o.s.ResumeToken)
		select {
		case <-done:
		case <-time.After(grace):
			o.proc.Kill()
		case <-o.job.Abort:
			o.proc.Kill()
		}
	}
	for {
		select {
		case a := <-done:
			if a.err != nil {
				return o.classifyTurnError(a.err)
			}
			return a.stop, nil
		case <-ctx.Done():
			cancelAndWait()
			if interruption(ctx) == ErrShutdown {
				return state.StopShutdown, o.shutdownError(o.currentTurn())
			}
			o.marker(history.MarkerPromptCancel, "The turn was interrupted by the user (Ctrl-C).", "")
			return state.StopCancelled, ErrInterrupted
		case <-tick.C:
			if err := o.storageErr(); err != nil {
				cancelAndWait()
				return state.StopError, err
			}
			if kind := o.controlRequested(); kind != "" {
				cancelAndWait()
				if kind == state.InputStop {
					o.update(func(s *state.Session) { s.Stopped = true })
					o.marker(history.MarkerPromptCancel, "The turn was stopped with kandev stop; it will not be continued automatically.", "")
					return state.StopUserCanceled, nil
				}
				o.marker(history.MarkerPromptCancel, "The turn was cancelled with kandev cancel.", "")
				return state.StopCancelled, nil
			}
			if o.conn.IdleFor() > idle && !o.permissionPending() {
				o.proc.Kill()
				<-done
				o.marker(history.MarkerPromptTimeout, fmt.Sprintf("The agent sent nothing for %s; kandev stopped it.", idle), "")
				return state.StopError, fmt.Errorf("%w: agent %s sent nothing for %s and was stopped (raise [agent] idle_timeout_seconds if it needs longer)", ErrAgentFailed, o.job.Profile.Name, idle)
			}
		}
	}
}

func (o *owner) permissionPending() bool { return o.s.PermissionPending }

func (o *owner) classifyTurnError(err error) (string, error) {
	var exit *AgentExitError
	switch {
	case errors.As(err, &exit):
		o.marker(history.MarkerAgentFailure, "The agent process died during the turn: "+exit.Desc+".", exit.Stderr)
		return state.StopProcessExit, fmt.Errorf("%w: %v; the session is resumable: kandev prompt %s \"...\"", ErrAgentFailed, err, o.s.ID)
	case errors.Is(err, ErrProtocol):
		o.marker(history.MarkerAgentFailure, err.Error(), o.proc.Stderr())
		return state.StopError, fmt.Errorf("%w: %v", ErrAgentFailed, err)
	}
	if Classify(err) == ErrAuth {
		o.marker(history.MarkerAuthRequired, "The agent needs authentication: "+describeErr(err), "")
	} else {
		o.marker(history.MarkerProviderFailure, "The agent failed the turn: "+describeErr(err), "")
	}
	return state.StopError, fmt.Errorf("%w: agent %s failed the turn: %s", ErrAgentFailed, o.job.Profile.Name, describeErr(err))
}

// endTurn records the turn's end and leaves the session waiting for input;
// a turn cut short by SIGTERM is left for its continuation instead.
func (o *owner) endTurn(turnID, stop string, err error) {
	if errors.Is(err, ErrShutdown) {
		o.leaveForContinuation(turnID)
		return
	}
	// One fsync'd append and one record write for the end of a turn.
	o.append(true,
		&state.Event{Type: state.EventTurnEnded, TurnID: turnID, StopReason: stop},
		&state.Event{Type: state.EventState, TurnID: turnID, State: state.StateWaitingForInput})
	o.update(func(s *state.Session) {
		s.CurrentTurn = ""
		s.StopReason = stop
		s.State = state.StateWaitingForInput
		s.PermissionPending = false
		s.LastActivityAt = time.Now().UTC()
		if err != nil && !errors.Is(err, ErrInterrupted) {
			s.ErrorMessage = history.Redact(err.Error())
		}
	})
	o.mu.Lock()
	o.turnID, o.onAccept = "", nil
	o.mu.Unlock()
}

// resumeContext builds the history block for the first prompt after a
// fresh agent session replaced one that had history.
func (o *owner) resumeContext(request string) string {
	max := o.job.Config.MaxReplayBytes()
	var evs []state.Event
	partial := false
	if o.s.ParentID != "" {
		evs, partial = historyForContext(o.job.Home.LogPath(o.s.ParentID), max)
	}
	own, ownPartial := historyForContext(o.job.Home.LogPath(o.s.ID), max)
	evs = append(evs, own...)
	return history.BuildResumeContextWindow(evs, request, o.s.ID, max, partial || ownPartial)
}

// shutdown stops the agent and records its exit; an abort kills its
// process group at once.
func (o *owner) shutdown() {
	if o.proc == nil {
		return
	}
	stopped := make(chan struct{})
	go func() {
		o.proc.Stop(500 * time.Millisecond)
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-o.job.Abort:
		o.proc.Kill()
	}
	if o.conn != nil {
		o.conn.Barrier(nil)
	}
	o.append(true, &state.Event{Type: state.EventAgentExited, PID: o.proc.PID, Content: o.proc.ExitDescription()})
	o.update(func(s *state.Session) { s.AgentPID, s.AgentStart, s.OwnerPID = 0, "", 0 })
}
