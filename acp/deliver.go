package acp

import (
	"context"
	"errors"
	"fmt"

	"github.com/kandev/kandev/state"
)

// Delivery is what Deliver did with a prompt.
type Delivery struct {
	Result  *Result
	Queued  bool   // the prompt went through the inbox of a live owner
	InputID string // its inbox id when queued
}

// Deliver sends job.Prompt. With no live owner this process becomes the
// owner (RunOwner). Otherwise the prompt is queued in the session's inbox
// and, when follow is set, the log is followed until the turn that serves it
// ends: that turn's events are emitted as if it ran here and its stop reason
// decides the error. If the owner dies first, Deliver takes over as owner,
// so a queued input is never stranded.
func Deliver(ctx context.Context, job Job, follow bool) (*Delivery, error) {
	if err := costCapped(job); err != nil {
		return nil, err
	}
	if job.Detach != nil {
		return deliverDetached(ctx, job, follow)
	}
	res, err := RunOwner(ctx, job)
	if !errors.Is(err, state.ErrOwnerBusy) {
		return &Delivery{Result: res}, err
	}
	h := job.Home
	from := h.LogSize(job.SessionID)
	in := &state.Input{Kind: state.InputPrompt, Text: job.Prompt}
	if err := h.Enqueue(job.SessionID, in); err != nil {
		return nil, err
	}
	d := &Delivery{Queued: true, InputID: in.ID}
	if !follow {
		return d, nil
	}
	return deliverFollow(ctx, job, d, &inputTurn{inputID: in.ID, emit: job.Emit}, from)
}

// deliverFollow follows the log from offset from until the turn t picks
// ends, taking over as owner here whenever the owner dies first.
func deliverFollow(ctx context.Context, job Job, d *Delivery, t *inputTurn, from int64) (*Delivery, error) {
	h := job.Home
	var err error
	for {
		from, err = state.Follow(ctx, h.LogPath(job.SessionID), from, t.see, func() bool {
			alive, _ := h.OwnerAlive(job.SessionID)
			return !alive
		})
		if t.ended {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return d, fmt.Errorf("%w: stopped following; the prompt stays queued as %s", interruption(ctx), t.inputID)
			}
			return d, err
		}
		// The owner is gone before our turn ended: take over and serve the inbox.
		job.Prompt, job.OwnInput = "", t.inputID
		job.Emit = t.see0
		res, err := RunOwner(ctx, job)
		if errors.Is(err, state.ErrOwnerBusy) {
			continue // someone else took over first: keep following
		}
		d.Result = res
		if t.ended || err != nil {
			if err == nil {
				err = stopError(t.stop)
			}
			return d, err
		}
		from = h.LogSize(job.SessionID)
	}
	d.Result = &Result{Session: settledSession(ctx, h, job.SessionID, t), StopReason: t.stop}
	if t.parked {
		return d, waitingError(job.SessionID)
	}
	return d, stopError(t.stop)
}

// stopError maps the stop reason of a followed turn to what its owner would have returned.
func stopError(stop string) error {
	switch stop {
	case state.StopProcessExit, state.StopError:
		return fmt.Errorf("%w: the turn ended with %s (see kandev events)", ErrAgentFailed, stop)
	case state.StopShutdown:
		return fmt.Errorf("the owner died during the turn; run kandev resume to continue it")
	case state.StopRateLimited:
		return fmt.Errorf("%w: the turn ended with rate_limited (kandev status shows when the limit resets)", ErrRateLimited)
	}
	return nil
}

// inputTurn picks the events of the turn that serves one inbox input (or
// the initial turn). A deferred permission request in it ends the
// following, parked: the owner keeps the turn open.
type inputTurn struct {
	inputID string
	initial bool
	// continues: when the turn is cut off (shutdown), its follow-up (the one
	// continuation, or the message sent again) is followed as its answer.
	continues bool
	awaiting  bool // the turn was cut off; its follow-up has not started yet
	turnID    string
	ended     bool
	parked    bool
	stop      string
	emit      func(state.Event)
}

func (t *inputTurn) see(e state.Event) bool {
	t.see0(e)
	return !t.ended
}

func (t *inputTurn) see0(e state.Event) {
	if t.turnID == "" {
		if !t.starts(e) {
			return
		}
		t.turnID, t.awaiting = e.TurnID, false
	}
	if e.TurnID != t.turnID || t.ended {
		return
	}
	if t.emit != nil {
		t.emit(e)
	}
	switch {
	case e.Type == state.EventTurnEnded && t.continues && e.StopReason == state.StopShutdown:
		t.turnID, t.awaiting = "", true
	case e.Type == state.EventTurnEnded:
		t.ended, t.stop = true, e.StopReason
	case e.Type == state.EventPermissionRequest && e.Deferred:
		t.ended, t.parked = true, true
	}
}

// starts reports whether e begins the followed turn: the one that serves
// the input (or the initial turn), or, once that was cut off, its
// follow-up: the continuation, or the message sent again (a queued turn
// that serves no inbox input).
func (t *inputTurn) starts(e state.Event) bool {
	if e.Type != state.EventTurnStarted {
		return false
	}
	if t.awaiting {
		// A first prompt sent again is a user turn (PlanOwner's resend).
		resent := state.SourceQueued
		if t.initial {
			resent = state.SourceUser
		}
		return e.Source == state.SourceContinuation || e.Source == resent && e.InputID == ""
	}
	return e.InputID == t.inputID && !t.initial || t.initial && e.Source == state.SourceInitial
}
