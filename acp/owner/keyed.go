package owner

import (
	"context"
	"errors"
	"fmt"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/state"
)

// deliverOnce sends job.Prompt at most once for the session and key, across
// processes and crashes (kandev prompt --key). The key is queued with the
// input, durably and under the record lock, before any owner can send it
// (state.EnqueueOnce); every sender, the first and every retry, then
// follows the one turn that serves that input from the start of the log:
// a turn that already ended is printed again with its stop reason, a
// running one is followed, one whose owner died is taken over here. A turn
// cut off by a crash is answered by its follow-up (its one continuation, or
// its message sent again when it never reached the agent), never by a
// second copy of the message.
func deliverOnce(ctx context.Context, job Job, key string, follow bool) (*Delivery, error) {
	if err := costCapped(job); err != nil {
		return nil, err
	}
	h, id := job.Home, job.SessionID
	failpoint.Wait(ctx, failpoint.BeforeKeyQueued)
	if ctx.Err() != nil {
		return nil, interruption(ctx)
	}
	in := &state.Input{Kind: state.InputPrompt, Text: job.Prompt, Key: key, Ask: askerOf(job), Steer: job.Queued.Steer}
	if _, err := h.EnqueueOnce(id, in); err != nil {
		return nil, err
	}
	d := &Delivery{Queued: true, InputID: in.ID}
	failpoint.Wait(ctx, failpoint.AfterKeyQueued)
	if ctx.Err() != nil {
		return d, fmt.Errorf("%w: the prompt stays queued as %s", interruption(ctx), in.ID)
	}
	job.Prompt, job.OwnInput = "", in.ID
	if !follow {
		if job.Detach != nil {
			return d, ensure(ctx, job)
		}
		res, err := run(ctx, job)
		if errors.Is(err, state.ErrOwnerBusy) {
			return d, nil
		}
		d.Queued, d.Result = false, res
		return d, err
	}
	t := &inputTurn{inputID: in.ID, continues: true, emit: job.Emit, ask: askParked(ctx, job)}
	d, err := followKeyed(ctx, job, d, t)
	if t.ended {
		failpoint.Wait(ctx, failpoint.AfterKeyedTurn)
	}
	return d, err
}

// followKeyed follows t from the start of the log until it ends or parks,
// running the owner here whenever none is alive (detached when the job
// says so). An owner that served everything without ending t (the cut-off
// turn's continuation is paused) ends the following with an error.
func followKeyed(ctx context.Context, job Job, d *Delivery, t *inputTurn) (*Delivery, error) {
	h, id := job.Home, job.SessionID
	var from int64
	for {
		var err error
		if job.Detach != nil {
			from, err = followOwned(ctx, job, FollowsInput, from, t.see)
			if afterFollow(ctx, err, FollowsInput, nil, false) == ReachHere {
				job.Detach, job.Linger = nil, 0 // run it here, where its error is shown
				err = nil
			}
		} else {
			from, err = eventlog.Follow(ctx, h.LogPath(id), from, t.see, func() bool {
				alive, _ := h.OwnerAlive(id)
				return !alive || t.awaiting && pausedIdle(h, id)
			})
		}
		if t.ended || t.parked {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return d, leaveTurn(ctx, job, t, from)
			}
			return d, err
		}
		if job.Detach != nil {
			continue
		}
		if t.awaiting && pausedIdle(h, id) {
			return d, notFollowedUp(h, id, t)
		}
		emit := job.Emit
		job.Emit = t.see0
		res, err := run(ctx, job)
		job.Emit = emit
		if errors.Is(err, state.ErrOwnerBusy) {
			continue // someone else took over first: keep following
		}
		d.Result = res
		if !t.ended && !t.parked {
			if err != nil {
				return d, err
			}
			return d, notFollowedUp(h, id, t)
		}
		if err != nil {
			return d, err
		}
		break
	}
	if d.Result == nil || d.Result.Session == nil {
		d.Result = &Result{Session: settledSession(ctx, h, id, t), StopReason: t.stop}
	}
	t.causeFrom(d.Result.Session)
	return d, t.err(id)
}

// pausedIdle reports a session that runs no turn and whose continuation is
// paused: the follow-up of a cut-off turn will not come by itself.
func pausedIdle(h *state.Home, id string) bool {
	s, err := h.LoadSession(id)
	return err == nil && s.CurrentTurn == "" && s.Pause != nil
}

// notFollowedUp is the error of a keyed prompt whose turn did not end.
func notFollowedUp(h *state.Home, id string, t *inputTurn) error {
	if t.awaiting {
		return fmt.Errorf("%w: the turn of this prompt was cut off and its continuation is paused (kandev status %s); it is not sent again", ErrNotResumable, id)
	}
	return fmt.Errorf("the owner of session %s exited before the prompt (%s) was served; run the command again", id, t.inputID)
}

// followInitial is deliverOnce for a session's first prompt (kandev start
// --key run again): the initial turn is printed again when it ended,
// followed while it runs, and run here, once, when its owner died before
// sending it; a cut-off one is answered by its follow-up.
func followInitial(ctx context.Context, job Job) (*Result, error) {
	t := &inputTurn{initial: true, continues: true, emit: job.Emit, ask: askParked(ctx, job)}
	d, err := followKeyed(ctx, job, &Delivery{}, t)
	if d == nil {
		return nil, err
	}
	return d.Result, err
}
