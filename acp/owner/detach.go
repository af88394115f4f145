package owner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/state"
)

// ErrWaitingForPermission ends a command whose turn is parked on a deferred
// permission request: the detached owner keeps the turn open.
var ErrWaitingForPermission = errors.New("waiting for permission")

// errOwnerGone: the detached owner this process started exited before the
// followed turn ended.
var errOwnerGone = errors.New("detached owner exited")

// afterFollow is DecideReach for a command whose following of a detached
// owner it started stopped with err: interrupted (ReachLeave), or that owner
// exited early (s: the record it left, nil when not read; restored: it
// started the agent). "" when neither: the following ended as it should.
func afterFollow(ctx context.Context, err error, follows Follows, s *state.Session, restored bool) Reach {
	f := ReachFacts{Follows: follows, Interrupted: errInterruptedBy(ctx, err)}
	if errors.Is(err, errOwnerGone) {
		f.Early = &EarlyExit{}
		if s != nil {
			f.Early.Failure, f.Early.Restored = s.ErrorMessage, restored && s.AgentPID == 0
		}
	}
	if !f.Interrupted && f.Early == nil {
		return ""
	}
	return DecideReach(f)
}

// startDetached starts a kandev process that owns job's session in its own
// process session, with stdin on /dev/null and its output appended to the
// session's owner.out: nothing ties it to this command's terminal or pipes,
// so `kandev prompt ... | cat` ends when the turn does. It returns once that
// process holds the owner lock, or has exited (another owner won the race,
// or it failed: see owner.out and the record).
//
// The owner gets the prompt it serves first through its stdin, never a
// file under the home: job.InitialPrompt as typed (the record keeps it
// redacted), and job.OwnInput names the queued input it was started for.
func startDetached(ctx context.Context, job Job) error {
	h, id := job.Home, job.SessionID
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	out, err := h.OpenOwnerOut(id)
	if err != nil {
		return err
	}
	defer out.Close()
	args := job.Detach
	if job.OwnInput != "" {
		args = append(slices.Clip(args), "--input", job.OwnInput)
	}
	if job.InitialPrompt != "" {
		args = append(slices.Clip(args), "--prompt-stdin")
	}
	stdin, feed, err := os.Pipe()
	if err != nil {
		return err
	}
	defer stdin.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, out, out
	cmd.Dir = h.Dir
	cmd.SysProcAttr = detachedProcAttr()
	if err := cmd.Start(); err != nil {
		feed.Close()
		return fmt.Errorf("start a detached owner for %s: %w", id, err)
	}
	go func() {
		// A pipe holds 64 KiB; the owner reads the rest as it starts. An
		// owner that exits first (lost the race) makes the write fail: the
		// record keeps the prompt, redacted, for the owner that won.
		_, _ = io.WriteString(feed, job.InitialPrompt)
		feed.Close()
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// The lock is taken within milliseconds; a flock makes no file event to wait on.
	for {
		if alive, _ := h.OwnerAlive(id); alive {
			return nil
		}
		select {
		case <-exited:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// followOwned follows the session's log from offset from with see until see
// returns false. Whenever no owner is alive, one is started detached (once);
// if that one exits before see is done, errOwnerGone lets the caller run
// the owner here, so the reason is reported where the user sees it.
func followOwned(ctx context.Context, job Job, follows Follows, from int64, see func(eventlog.Event) bool) (int64, error) {
	return followOwnedUntil(ctx, job, follows, from, see, nil)
}

// followOwnedUntil is followOwned that also ends when settled reports true
// while nothing new is written (checked about every 200 ms).
func followOwnedUntil(ctx context.Context, job Job, follows Follows, from int64, see func(eventlog.Event) bool, settled func() bool) (int64, error) {
	h, id := job.Home, job.SessionID
	done := false
	var relay *progressRelay
	defer func() { relay.stop() }()
	seen := func(e eventlog.Event) bool { relay.poll(); done = !see(e); return !done }
	started := false
	for {
		switch reachNow(job, follows, started) {
		case ReachJoin: // follow the live owner
		case ReachDetached:
			started = true
			var outFrom int64
			if fi, err := os.Stat(h.OwnerOutPath(id)); err == nil {
				outFrom = fi.Size()
			}
			relay = relayProgress(job, outFrom)
			if err := startDetached(ctx, job); err != nil {
				return from, err
			}
		default:
			// The detached owner it started exited early (or none runs and
			// none is to be started here): read what it wrote before it
			// died, then the caller decides (afterFollow).
			from, _ = eventlog.Follow(ctx, h.LogPath(id), from, seen, func() bool { return true })
			if done {
				return from, nil
			}
			return from, errOwnerGone
		}
		var err error
		from, err = eventlog.Follow(ctx, h.LogPath(id), from, seen, func() bool {
			if settled != nil && settled() {
				done = true
				return true
			}
			alive, _ := h.OwnerAlive(id)
			return !alive
		})
		if done || err != nil {
			return from, err
		}
	}
}

// waitingError is the error of a command whose turn waits for a deferred
// permission answer.
func waitingError(id string, question bool) error {
	if question {
		return fmt.Errorf("%w: the agent asks a question: kandev answer %s VALUE | kandev deny %s", ErrWaitingForPermission, id, id)
	}
	return fmt.Errorf("%w: kandev approve %s | kandev deny %s", ErrWaitingForPermission, id, id)
}

// deliverDetached queues job.Prompt and follows the turn that serves it,
// starting a detached owner when none runs. A turn parked on a deferred
// permission request ends the command with ErrWaitingForPermission.
func deliverDetached(ctx context.Context, job Job, follow bool) (*Delivery, error) {
	h, id := job.Home, job.SessionID
	from := eventlog.Size(h.LogPath(id))
	in := PromptInput(job)
	in.Unattended = !follow // nobody follows it: [limits] treats it as unattended work
	if err := h.Enqueue(id, in); err != nil {
		return nil, err
	}
	d := &Delivery{Queued: true, InputID: in.ID}
	sayQueued(job)
	job.OwnInput = in.ID // an owner started here serves it as its caller's prompt
	if !follow {
		if heldForLimit(h, id) {
			return d, nil // it waits for the agent's window to reset: kandev recover serves it then
		}
		return d, ensure(ctx, job)
	}
	t := &inputTurn{inputID: in.ID, emit: job.Emit, warn: job.Warn, afterDeath: true, ask: askParked(ctx, job)}
	failpoint.Wait(ctx, failpoint.AfterInputQueued)
	if ctx.Err() != nil {
		return d, leaveTurn(ctx, job, t, from) // interrupted before it read a line
	}
	at, err := followOwnedUntil(ctx, job, FollowsInput, from, t.see, func() bool { return t.noFollowUp(h, id) })
	switch afterFollow(ctx, err, FollowsInput, nil, false) {
	case ReachHere:
		// The detached owner failed: run it here, where its error is shown.
		job.Prompt, job.OwnInput, job.Emit, job.Detach, job.Linger = "", in.ID, t.see0, nil, 0
		res, err := run(ctx, job)
		if errors.Is(err, state.ErrOwnerBusy) {
			return deliverFollow(ctx, job, d, t, eventlog.Size(h.LogPath(id)))
		}
		handOver(ctx, job)
		d.Result = res
		switch {
		case err == nil && t.ended:
			err = t.err(id)
		case err == nil && t.awaiting:
			err = cutOffError(h, id, t)
		}
		return d, err
	case ReachLeave:
		return d, leaveTurn(ctx, job, t, at)
	}
	switch {
	case err != nil:
		return d, err
	case t.awaiting:
		return d, cutOffError(h, id, t)
	}
	awaitClaimGivenUp(ctx, job)
	d.Result = &Result{Session: settledSession(ctx, h, id, t), StopReason: t.stop}
	t.causeFrom(d.Result.Session)
	return d, t.err(id)
}

// followStart runs a new session's first steps in a detached owner and
// follows them here: every event from the start of the log until the
// initial turn ends (or, without an initial prompt, until the agent has
// started).
func followStart(ctx context.Context, job Job, hasPrompt bool) (*Result, error) {
	t := &inputTurn{initial: true, emit: job.Emit, warn: job.Warn, ask: askParked(ctx, job)}
	// What comes before the agent has started is shown only once it has: a
	// launch that fails is reported once, by the error, as when run here.
	var held []eventlog.Event
	started := false
	see := func(e eventlog.Event) bool {
		if !started {
			held = append(held, e)
			if e.Type != eventlog.EventAgentStarted {
				return true
			}
			started = true
			for _, h := range held[:len(held)-1] {
				job.Emit(h)
			}
			if !hasPrompt {
				job.Emit(e)
				return true // on to the state it waits in, as when run here
			}
		}
		if !hasPrompt {
			job.Emit(e)
			return e.Type != eventlog.EventState
		}
		if t.turnID == "" && !(e.Type == eventlog.EventTurnStarted && e.Source == eventlog.SourceInitial) {
			job.Emit(e)
		}
		return t.see(e)
	}
	at, err := followOwned(ctx, job, FollowsFirstTurn, 0, see)
	if afterFollow(ctx, err, FollowsFirstTurn, nil, false) == ReachLeave {
		err = leaveTurn(ctx, job, t, at)
		return &Result{Session: settledSession(context.WithoutCancel(ctx), job.Home, job.SessionID, t), StopReason: t.stop}, err
	}
	s := settledSession(ctx, job.Home, job.SessionID, t)
	for deadline := time.Now().Add(2 * time.Second); !hasPrompt && err == nil && s != nil && s.State == state.StateStarting && time.Now().Before(deadline); {
		// The log says it waits; the record follows a moment later.
		time.Sleep(20 * time.Millisecond)
		if s2, lerr := job.Home.LoadSession(job.SessionID); lerr == nil {
			s = s2
		}
	}
	switch afterFollow(ctx, err, FollowsFirstTurn, s, false) {
	case ReachFailed:
		return &Result{Session: s}, fmt.Errorf("%w: %s", ErrAgentFailed, s.ErrorMessage)
	case ReachHere:
		job.Detach, job.Linger = nil, 0
		return run(ctx, job)
	}
	if err != nil {
		return &Result{Session: s}, err
	}
	if t.parked {
		return &Result{Session: s}, waitingError(job.SessionID, t.question)
	}
	awaitClaimGivenUp(ctx, job)
	t.causeFrom(s)
	return &Result{Session: s, StopReason: t.stop}, t.err(job.SessionID)
}

// followResume restores the session in a detached owner and follows it
// here until that owner is warm and idle (the continuation of an
// interrupted turn and queued inputs served), parks a permission request,
// or exits. Ctrl-C here cancels the follow-up of the interrupted turn
// (before or while it runs; never continued again), SIGTERM interrupts it,
// as they would with the owner in this command (leaveTurn).
func followResume(ctx context.Context, job Job) (*Result, error) {
	h, id := job.Home, job.SessionID
	res := &Result{}
	parked, question := false, false
	ask := askParked(ctx, job)
	follow := &inputTurn{followUpOf: owedFollowUp(h, job.Record, id), warn: job.Warn}
	see := func(e eventlog.Event) bool {
		if job.Emit != nil {
			job.Emit(e)
		}
		follow.track(e)
		switch e.Type {
		case eventlog.EventAgentStarted:
			res.Restore, res.FallbackReason = acp.RestoreMethod(e.Restore), e.FallbackReason
		case eventlog.EventTurnEnded:
			res.StopReason = e.StopReason
		}
		if e.Type == eventlog.EventPermissionRequest && e.Deferred && ask != nil {
			ask(e)
			return true
		}
		parked = e.Type == eventlog.EventPermissionRequest && e.Deferred
		question = parked && e.ToolKind == ToolKindQuestion
		return !parked
	}
	stale := leftWarm(h, job.Record, id)
	settled := func() bool {
		// warm_until alone may be a killed owner's leftover: its owner must
		// live, and have written it (the one the record had before this
		// owner started is the dead one's, until the new owner clears it).
		s, err := h.LoadSession(id)
		alive, _ := h.OwnerAlive(id)
		return err == nil && alive && s.WarmUntil != nil && (stale == nil || !s.WarmUntil.Equal(*stale)) && s.CurrentTurn == "" && h.PendingInputs(s) == 0
	}
	at, err := followOwnedUntil(ctx, job, FollowsRestore, eventlog.Size(h.LogPath(id)), see, settled)
	var s *state.Session
	if errors.Is(err, errOwnerGone) {
		s, _ = h.LoadSession(id)
	}
	reach := afterFollow(ctx, err, FollowsRestore, s, res.Restore != "")
	if reach == ReachLeave {
		if follow.followUpOf == "" {
			return res, fmt.Errorf("%w: stopped following; session %s goes on in its owner (kandev attach %s)", interruption(ctx), id, id)
		}
		follow.emit, follow.idle = job.Emit, settled
		err = leaveTurn(ctx, job, follow, at)
		res.Session, _ = h.LoadSession(id)
		if follow.stop != "" {
			res.StopReason = follow.stop
		}
		return res, err
	}
	switch reach {
	case ReachDone:
		err = nil // it restored, served what was pending and exited (no linger)
	case ReachHere:
		job.Detach, job.Linger = nil, 0
		return run(ctx, job)
	}
	if err == nil && !parked {
		awaitClaimGivenUp(ctx, job)
	}
	res.Session, _ = h.LoadSession(id)
	if err == nil && parked {
		err = waitingError(id, question)
	}
	return res, err
}

// leftWarm is the warm_until the record of session id has before a new
// owner starts: an owner killed while warm leaves it behind (nil: none).
// s is the record as the caller read it (nil: read it now).
func leftWarm(h *state.Home, s *state.Session, id string) *time.Time {
	if s == nil {
		s, _ = h.LoadSession(id)
	}
	if s == nil {
		return nil
	}
	return s.WarmUntil
}

// owedFollowUp is the interrupted turn of session id that the next owner
// follows up ("" when none): one left open by an owner that died, or
// repaired and not continued yet. s is the record as the caller read it
// (nil: read it now).
func owedFollowUp(h *state.Home, s *state.Session, id string) string {
	if s == nil {
		var err error
		if s, err = h.LoadSession(id); err != nil {
			return ""
		}
	}
	if alive, _ := h.OwnerAlive(id); s.CurrentTurn != "" && !alive {
		return s.CurrentTurn
	}
	if s.Interrupted != nil && s.Interrupted.Turn != s.ContinuedTurn {
		return s.Interrupted.Turn
	}
	return ""
}

// track notes where the turn t follows starts and how it ends, and
// nothing else (the caller shows and asks).
func (t *inputTurn) track(e eventlog.Event) {
	if t.turnID == "" && t.starts(e) {
		t.turnID = e.TurnID
	}
	if t.turnID != "" && e.TurnID == t.turnID && e.Type == eventlog.EventTurnEnded && !t.ended {
		t.ended, t.stop = true, e.StopReason
	}
}

// ensure makes sure an owner serves what the command queued: a live one
// is joined (it serves its inbox), else a detached one is started.
func ensure(ctx context.Context, job Job) error {
	if reachNow(job, FollowsQueue, false) == ReachJoin {
		return nil
	}
	return startDetached(ctx, job)
}

// settledSession is the record once it has caught up with the followed
// turn: its owner writes the record just after the turn's last lines, so a
// follower that stops at turn_ended waits (briefly) for it.
func settledSession(ctx context.Context, h *state.Home, id string, t *inputTurn) *state.Session {
	changes := watch.WatchFiles(h.RecordPath(id))
	defer changes.Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		s, err := h.LoadSession(id)
		if err != nil || !t.ended || t.parked || t.turnID == "" || s.CurrentTurn != t.turnID || time.Now().After(deadline) {
			return s
		}
		if alive, _ := h.OwnerAlive(id); !alive {
			return s
		}
		if changes.Wait(ctx, 50*time.Millisecond) != nil {
			return s
		}
	}
}
