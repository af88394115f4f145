package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/kandev/kandev/state"
)

// CloseIdleWarm ends the warm owner of session id the way kandev close
// does (an InputClose, then waiting until it and its agent are gone) when
// all it does is keep an idle agent alive: a command that needs the
// session to itself takes it, and the next prompt restores the agent
// anyway. A running turn, a parked permission or a queued input is left
// alone (the command then meets a busy owner).
func CloseIdleWarm(ctx context.Context, h *state.Home, id string) error {
	if alive, _ := h.OwnerAlive(id); !alive {
		return nil
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	if !s.OwnerDetached || s.CurrentTurn != "" || s.PermissionPending || h.PendingInputs(s) > 0 {
		return nil
	}
	if err := h.Enqueue(id, &state.Input{Kind: state.InputClose}); err != nil {
		return err
	}
	return AwaitOwnerGone(ctx, h, id)
}

// AwaitOwnerGone waits for the owner lock of id to be released, and for
// its agent, which its supervisor may still be stopping, to be gone.
func AwaitOwnerGone(ctx context.Context, h *state.Home, id string) error {
	for {
		if alive, _ := h.OwnerAlive(id); !alive && !h.AgentAlive(id) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: stopped waiting; session %s still closes", ErrInterrupted, id)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
