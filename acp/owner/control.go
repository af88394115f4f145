package owner

import (
	"context"

	"github.com/kandev/kandev/state"
)

// dialControl sends r.Control to the session's live owner: a cancel (of
// the turn, or of one child), a stop, a close, or an answer typed where a
// turn is followed (attach). With no live owner nothing is sent
// (Delivery.Live false), and the caller says what that means; with
// r.IfTurn, neither is anything sent while the owner runs no turn. The
// owner acts on it when its inbox line is written.
func dialControl(job Job, r Request) (*Delivery, error) {
	h, id := job.Home, job.SessionID
	alive, _ := h.OwnerAlive(id)
	if DecideReach(ReachFacts{Follows: FollowsControl, OwnerAlive: alive}) != ReachJoin {
		return &Delivery{}, nil
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return nil, err
	}
	d := &Delivery{Live: true, Record: s}
	if r.IfTurn && s.CurrentTurn == "" {
		return d, nil
	}
	if err := h.Enqueue(id, r.Control); err != nil {
		return nil, err
	}
	d.Queued, d.InputID = true, r.Control.ID
	return d, nil
}

// dialQueue queues r.Queue (a prompt typed where a turn is followed, or
// nothing) and makes sure an owner serves it: the live one, or a detached
// one started for it.
func dialQueue(ctx context.Context, job Job, r Request) (*Delivery, error) {
	d := &Delivery{}
	if r.Queue != nil {
		if err := job.Home.Enqueue(job.SessionID, r.Queue); err != nil {
			return nil, err
		}
		d.Queued, d.InputID = true, r.Queue.ID
	}
	return d, ensure(ctx, job)
}

// Live reports whether a live owner holds session id now, for a command
// that shows something else when one does (resume of a session its warm
// owner already restored): where a command would reach it.
func Live(h *state.Home, id string) bool {
	alive, _ := h.OwnerAlive(id)
	return DecideReach(ReachFacts{Follows: FollowsRestore, OwnerAlive: alive}) == ReachJoin
}
