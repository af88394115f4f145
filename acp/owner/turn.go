package owner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// turn runs one prompt turn to its end.
func (o *owner) turn(ctx context.Context, source, text string) error {
	return o.turnFor(ctx, source, text, nil)
}

// turnFor runs a turn that serves inbox input in (nil for none): the input
// counts as served once its turn_started is on disk.
func (o *owner) turnFor(ctx context.Context, source, text string, in *state.Input) error {
	turnID := fmt.Sprintf("t%d", o.s.Turns+1)
	inputID, key := "", ""
	if in != nil {
		inputID, key = in.ID, in.Key
	}
	sent := text
	carriesContext := shouldInjectResumeContext(o.s.PendingContext, source, o.s.ParentID)
	if carriesContext {
		sent = o.resumeContext(text)
	}
	o.beginTurn(turnID, source, carriesContext)
	// An inbox input counts as served once its turn is on disk, so that turn
	// is made durable before the input is consumed. Any other turn is made
	// durable by its prompt_sent's fsync, before anything is sent, or by the
	// marker that says it was not sent.
	o.append(in != nil,
		&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turnID, Source: source, InputID: inputID, Key: key, SendRecorded: true},
		&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turnID, Role: "user", Content: text},
		&eventlog.Event{Type: eventlog.EventState, TurnID: turnID, State: state.StateRunning},
	)
	if in != nil {
		o.consume(*in)
	}
	if err := o.storageErr(); err != nil {
		// The turn is not on disk as it should be: it is not sent.
		o.endTurn(turnID, eventlog.StopError, err)
		return err
	}
	stop, err := o.prompt(ctx, sent)
	if err == nil {
		o.accept()
		stop, err = o.limitInAnswer(turnID, stop)
	}
	o.res.StopReason = stop
	o.endTurn(turnID, stop, err)
	if serr := o.claim.TurnEnded(context.WithoutCancel(ctx)); serr != nil {
		o.warn("session " + o.s.ID + " was not pushed: " + serr.Error())
	}
	return err
}

// beginTurn makes turnID the running turn. Once its prompt is sent, an
// initial prompt is no longer kept (it is never sent again); once the agent
// accepts it, the resume context it carried is no longer owed.
func (o *owner) beginTurn(turnID, source string, carriesContext bool) {
	o.cancelled.Store(false)
	o.personEnded = false
	o.mu.Lock()
	o.turnID, o.accepted = turnID, false
	followsUp := o.followsUp
	o.onSent = func() {
		if followsUp != "" {
			// A sent follow-up that is cut off is the interrupted turn from
			// then on: followsUp is followed up at most once.
			o.markFollowedUp(followsUp)
		}
		if source == eventlog.SourceInitial {
			o.update(func(s *state.Session) { s.InitialPrompt = "" })
		}
	}
	o.onAccept = func() {
		if carriesContext {
			o.update(func(s *state.Session) { s.PendingContext = false })
		}
	}
	o.mu.Unlock()
	o.dropLimit()
	o.update(func(s *state.Session) {
		s.Turns++
		s.CurrentTurn = turnID
		s.StopReason = ""
		s.ErrorMessage = ""
		s.TurnSetup = setup.TurnSetupOf(s.Setup) // a continuation under another setup pauses
		s.State = state.StateRunning
		s.LastActivityAt = o.now()
	})
}

// accept records, once per turn, that the agent accepted its prompt.
func (o *owner) accept() {
	o.mu.Lock()
	fn := o.onAccept
	already := o.accepted
	o.accepted = true
	o.mu.Unlock()
	if !already && fn != nil {
		fn()
	}
}

// onEvents runs on the connection's recorder goroutine.
func (o *owner) onEvents(evs []*eventlog.Event) {
	turn := o.currentTurn()
	o.noteAnswer(turn, evs)
	answered := false
	for _, e := range evs {
		e.TurnID = turn
		if e.Type == eventlog.EventToolCall || e.Type == eventlog.EventToolResult {
			o.noteCall(e.ToolCallID)
		}
		// The same events that make the log say "accepted" (DescribeTurn): a
		// usage report, say, is no answer to the prompt.
		answered = answered || agentEventTypes[e.Type]
	}
	// The agent answered: its acceptance of the prompt (which settles a
	// resume context the prompt carried) is recorded before anything of the
	// answer is written or shown. Whether the prompt is sent again after a
	// crash is prompt_sent's business, not this.
	o.mu.Lock()
	acceptedNow := !o.accepted && turn != "" && answered
	o.accepted = o.accepted || answered
	fn := o.onAccept
	o.mu.Unlock()
	if acceptedNow && fn != nil {
		fn()
	}
	// window.go: the agent's usage window goes on the record before its
	// limit event is in the log, so an owner killed after that line leaves
	// a record whose window holds unattended work back.
	problem := o.noteWindows(evs)
	o.appendUpdates(evs)  // usage.go: usage events also update the record's totals
	problem()             // a marker for window data that made no sense, after it
	o.noteAgentSetup(evs) // owner_setup.go: mode and option changes the agent reports
	o.noteAgentTitle(evs) // title.go: the title the agent gives the session
	o.countChildren(evs)  // children.go: the record counts the children
}

// prompt sends the turn and waits for its end, the agent's death, the idle
// timeout or the user's interrupt. The send is recorded first (markSent);
// a turn interrupted before it is never sent.
func (o *owner) prompt(ctx context.Context, text string) (string, error) {
	failpoint.Wait(ctx, failpoint.BeforePromptSent)
	if ctx.Err() != nil {
		return o.notSent(ctx)
	}
	if o.cancelledWhileQueued() {
		note := "The message was cancelled (Ctrl-C in the command that sent it) while it waited in the queue; it was not sent to the agent."
		if o.followingUp() != "" {
			note = "The follow-up of the interrupted turn was cancelled (Ctrl-C in the kandev resume that followed it) before it was sent to the agent; it will not be sent."
		}
		o.marker(history.MarkerPromptCancel, note, "")
		return eventlog.StopCancelled, nil
	}
	if err := o.markSent(); err != nil {
		return eventlog.StopError, err
	}
	done := make(chan promptAnswer, 1)
	token := o.s.ResumeToken
	go func() {
		stop, err := o.conn.Prompt(context.Background(), token, text)
		done <- promptAnswer{stop, err}
	}()
	return o.awaitTurnEnd(ctx, done)
}

// awaitTurnEnd waits for the running turn's answer on done, the agent's
// death, the idle timeout, a control input or the user's interrupt.
func (o *owner) awaitTurnEnd(ctx context.Context, done chan promptAnswer) (string, error) {
	// A control input (Ctrl-C in a follower, a steer) is acted on when its
	// inbox line is written; the ticker checks what writes no file (the
	// agent's silence, a failed write) and stands in where the OS gives no
	// notifications.
	inbox := watch.WatchFiles(o.job.Home.InboxPath(o.job.SessionID))
	defer inbox.Close()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-done:
			if err := o.storageErr(); err != nil {
				// Part of the answer is not on disk (a full disk): the turn
				// failed on this side, however the agent ended it.
				return eventlog.StopError, err
			}
			if a.err != nil {
				return o.classifyTurnError(a.err)
			}
			return a.stop, nil
		case <-ctx.Done():
			o.cancelAndWait(done)
			if fenced := o.claim.Fenced(); fenced != nil {
				return o.takenOver(fenced)
			}
			if interruption(ctx) == ErrShutdown {
				return eventlog.StopShutdown, o.shutdownError(o.currentTurn())
			}
			o.marker(history.MarkerPromptCancel, "The turn was interrupted by the user (Ctrl-C).", "")
			return eventlog.StopCancelled, personCancelled(o.s.ID, "Ctrl-C")
		case <-inbox.C():
			if stop, err, ended := o.checkTurn(done); ended {
				return stop, err
			}
		case <-tick.C:
			if stop, err, ended := o.checkTurn(done); ended {
				return stop, err
			}
		}
	}
}

// markSent records, durably and before the prompt is written to the
// agent, that it is sent: from here on the turn is never sent again, only
// continued. Only this write by the owner counts.
func (o *owner) markSent() error {
	o.append(true, &eventlog.Event{Type: eventlog.EventPromptSent, TurnID: o.currentTurn()})
	if err := o.storageErr(); err != nil {
		return err // not on disk: the prompt is not sent
	}
	o.mu.Lock()
	fn := o.onSent
	o.mu.Unlock()
	if fn != nil {
		fn()
	}
	return o.storageErr()
}

// notSent ends a turn interrupted before its prompt was sent: Ctrl-C drops
// the message and says so; after SIGTERM the next owner sends it (the log
// has no prompt_sent).
func (o *owner) notSent(ctx context.Context) (string, error) {
	if fenced := o.claim.Fenced(); fenced != nil {
		return o.takenOver(fenced)
	}
	if interruption(ctx) == ErrShutdown {
		return eventlog.StopShutdown, o.shutdownError(o.currentTurn())
	}
	o.droppedUnsent = true
	o.marker(history.MarkerPromptCancel, "The message was cancelled (Ctrl-C) before it was sent to the agent; it will not be sent.", "")
	return eventlog.StopCancelled, fmt.Errorf("%w: the message was cancelled (Ctrl-C) before it reached the agent and will not be sent; kandev prompt %s \"...\" sends one", ErrInterrupted, o.s.ID)
}

type promptAnswer struct {
	stop string
	err  error
}

// checkTurn is the periodic check of a running turn: a failed write, a
// kandev cancel or stop, and the idle timeout end it.
func (o *owner) checkTurn(done chan promptAnswer) (stop string, err error, ended bool) {
	if err := o.storageErr(); err != nil {
		o.cancelAndWait(done)
		return eventlog.StopError, err, true
	}
	if in := o.controlRequested(); in.Kind != "" {
		if in.Child != "" {
			o.cancelChild(in) // children.go: the turn goes on
			return "", nil, false
		}
		kind := in.Kind
		o.cancelAndWait(done)
		o.personEnded = true
		if kind == state.InputClose {
			o.marker(history.MarkerPromptCancel, "The turn was cancelled with kandev close --now.", "")
			return eventlog.StopCancelled, nil, true
		}
		if kind == state.InputStop {
			o.update(func(s *state.Session) { s.Stopped = true })
			o.marker(history.MarkerPromptCancel, "The turn was stopped with kandev stop; it will not be continued automatically.", "")
			return eventlog.StopUserCanceled, nil, true
		}
		o.marker(history.MarkerPromptCancel, cancelNote(in), "")
		return eventlog.StopCancelled, nil, true
	}
	o.steerQueued() // steer.go
	idle := time.Duration(o.job.Config.IdleTimeoutSeconds()) * time.Second
	if o.conn.IdleFor() > idle && !o.session().PermissionPending {
		o.proc.Kill()
		<-done
		o.marker(history.MarkerPromptTimeout, fmt.Sprintf("The agent sent nothing for %s; kandev stopped it.", idle), "")
		return eventlog.StopError, fmt.Errorf("%w: agent %s sent nothing for %s and was stopped (raise [agent] idle_timeout_seconds if it needs longer)", ErrAgentFailed, o.job.Profile.Name, idle), true
	}
	return "", nil, false
}

// cancelAndWait sends session/cancel and waits a bounded time for the
// agent to end the turn, then kills it; an abort kills it at once.
func (o *owner) cancelAndWait(done chan promptAnswer) {
	o.cancelled.Store(true)
	_ = o.conn.Cancel(o.session().ResumeToken)
	grace := time.Duration(o.job.Config.CancelGraceSeconds()) * time.Second
	select {
	case <-done:
	case <-time.After(grace):
		o.proc.Kill()
	case <-o.job.Abort:
		o.proc.Kill()
	}
}

func (o *owner) classifyTurnError(err error) (string, error) {
	var exit *acp.AgentExitError
	switch {
	case errors.As(err, &exit):
		o.marker(history.MarkerAgentFailure, "The agent process died during the turn: "+exit.Desc+".", exit.Stderr)
		return eventlog.StopProcessExit, fmt.Errorf("%w: %w; the session is resumable: kandev prompt %s \"...\"", ErrAgentFailed, err, o.s.ID)
	case errors.Is(err, acp.ErrProtocol):
		o.marker(history.MarkerAgentFailure, err.Error(), o.proc.Stderr())
		return eventlog.StopError, fmt.Errorf("%w: %w", ErrAgentFailed, err)
	}
	if lim, ok := acp.RecognizeLimit(err, o.now()); ok {
		return o.limitReached(lim)
	}
	if acp.Classify(err) == acp.ClassAuth {
		o.marker(history.MarkerAuthRequired, "The agent needs authentication: "+acp.DescribeError(err), "")
	} else {
		o.marker(history.MarkerProviderFailure, "The agent failed the turn: "+acp.DescribeError(err), "")
	}
	return eventlog.StopError, fmt.Errorf("%w: agent %s failed the turn: %s", ErrAgentFailed, o.job.Profile.Name, acp.DescribeError(err))
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
		&eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turnID, StopReason: stop},
		&eventlog.Event{Type: eventlog.EventState, TurnID: turnID, State: state.StateWaitingForInput})
	o.update(func(s *state.Session) {
		s.CurrentTurn = ""
		s.StopReason = stop
		s.State = state.StateWaitingForInput
		s.PermissionPending = false
		s.LastActivityAt = o.now()
		if stop != state.StopRateLimited {
			s.LimitResumes = 0 // the resume_after_limit budget counts limits in a row
		}
		if err != nil && !errors.Is(err, ErrInterrupted) {
			s.ErrorMessage = history.Redact(err.Error())
		}
	})
	o.mu.Lock()
	o.turnID, o.onAccept, o.onSent = "", nil, nil
	o.mu.Unlock()
}

// interactive reads prompts from the job's Next until it reports no more
// (resume -i). While it waits for the user, inputs other processes queue are
// served at once, so a follower never waits on someone's idle terminal.
func (o *owner) interactive(ctx context.Context) error {
	if o.job.Next == nil {
		return nil
	}
	lines, ready := o.readLines()
	// Inputs other processes queue wake it when written; the ticker stands
	// in where the OS gives no notifications.
	inbox := watch.WatchFiles(o.job.Home.InboxPath(o.job.SessionID))
	defer inbox.Close()
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
			if err := state.CheckPrompt(l.text); err != nil {
				o.warn(err.Error()) // one line too long: said, and the next one is read
			} else if strings.TrimSpace(l.text) != "" {
				if err := o.turn(ctx, eventlog.SourceUser, l.text); err != nil {
					return err
				}
			}
			if err := o.serveInbox(ctx); err != nil {
				return err
			}
			ready <- struct{}{}
		case <-inbox.C():
			if err := o.serveQueued(ctx); err != nil {
				return err
			}
		case <-tick.C:
			if err := o.serveQueued(ctx); err != nil {
				return err
			}
		}
	}
}

// serveQueued serves what other processes queued, if anything.
func (o *owner) serveQueued(ctx context.Context) error {
	if o.job.Home.PendingInputs(o.s) > 0 || o.setQueued() {
		return o.serveInbox(ctx)
	}
	return nil
}

type promptLine struct {
	text string
	ok   bool
}

// readLines calls the job's Next on its own goroutine, each time ready is
// signalled: only when the previous line has been handled, so the prompt
// sign never lands in the middle of a turn's output.
func (o *owner) readLines() (<-chan promptLine, chan<- struct{}) {
	lines := make(chan promptLine)
	ready := make(chan struct{}, 1)
	ready <- struct{}{}
	go func() {
		for range ready {
			text, ok := o.job.Next()
			lines <- promptLine{text, ok}
			if !ok {
				return
			}
		}
	}()
	return lines, ready
}
