package owner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/failpoint"
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
	// Live: a live owner held the session when a control request was sent
	// (FollowsControl); Record is the record as read then.
	Live   bool
	Record *state.Session
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
	if follow {
		failpoint.Wait(ctx, failpoint.AfterInputQueued)
		if ctx.Err() != nil {
			return d, leaveTurn(ctx, job, t, from) // interrupted before it read a line
		}
	}
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
