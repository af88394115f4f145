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
	t := &inputTurn{inputID: in.ID, emit: job.Emit}
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
				return d, fmt.Errorf("%w: stopped following; the prompt stays queued as %s", interruption(ctx), in.ID)
			}
			return d, err
		}
		// The owner is gone before our turn ended: take over and serve the inbox.
		job.Prompt, job.OwnInput = "", in.ID
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
	s, _ := h.LoadSession(job.SessionID)
	d.Result = &Result{Session: s, StopReason: t.stop}
	return d, stopError(t.stop)
}

// stopError maps the stop reason of a followed turn to what its owner would have returned.
func stopError(stop string) error {
	switch stop {
	case state.StopProcessExit, state.StopError:
		return fmt.Errorf("%w: the turn ended with %s (see kandev events)", ErrAgentFailed, stop)
	case state.StopShutdown:
		return fmt.Errorf("the owner died during the turn; run kandev resume to continue it")
	}
	return nil
}

// inputTurn picks the events of the turn that serves one inbox input.
type inputTurn struct {
	inputID string
	turnID  string
	ended   bool
	stop    string
	emit    func(state.Event)
}

func (t *inputTurn) see(e state.Event) bool {
	t.see0(e)
	return !t.ended
}

func (t *inputTurn) see0(e state.Event) {
	if t.turnID == "" {
		if e.Type == state.EventTurnStarted && e.InputID == t.inputID {
			t.turnID = e.TurnID
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
	if e.Type == state.EventTurnEnded {
		t.ended, t.stop = true, e.StopReason
	}
}
