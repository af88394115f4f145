package commands

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// doneCmd is kandev done.
type doneCmd struct {
	SessionRef
}

// Help shows an example.
func (c *doneCmd) Help() string { return "Example:\n  kandev done 20261130-0915" }

// Run marks the session COMPLETED and releases the caller's lease.
func (c *doneCmd) Run(env *Env) error { return finish(env, c.SessionRef, state.StateCompleted) }

// archiveCmd is kandev archive.
type archiveCmd struct {
	SessionRef
}

// Help shows an example.
func (c *archiveCmd) Help() string { return "Example:\n  kandev archive 20261130-0915" }

// Run marks the session CANCELLED.
func (c *archiveCmd) Run(env *Env) error { return finish(env, c.SessionRef, state.StateCancelled) }

// finish moves a session to a terminal state. A warm owner that only keeps
// an idle agent alive is closed first; a session whose owner runs a turn
// is refused: its owner would overwrite the state when its turn ends.
func finish(env *Env, ref SessionRef, to string) error {
	h, id, err := ref.pick(env, needOpen)
	if err != nil {
		return err
	}
	if err := closeIdleWarm(env, h, id); err != nil {
		return err
	}
	s, err := markFinished(h, id, to, env.Now())
	if err != nil {
		return err
	}
	// A finished session is driven by nobody: the caller's own lease goes
	// (another holder's stays, for that holder to release).
	if err := h.Detach(id, state.DefaultHolder(), env.Now()); err != nil && !errors.Is(err, state.ErrLeaseHeld) {
		return fmt.Errorf("session %s is %s, but its lease could not be released: %w", id, s.State, err)
	}
	env.Out.Object(sessionOutput{Session: s}, func(w io.Writer) {
		fmt.Fprintf(w, "session %s is %s\n", s.ID, s.State)
	})
	return nil
}

// markFinished records the terminal state to and logs it, under the owner
// lock: no owner starts meanwhile, to overwrite the state when its turn ends.
func markFinished(h *state.Home, id, to string, now time.Time) (*state.Session, error) {
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return nil, fmt.Errorf("%w: session %s is running in another kandev process; wait for it or run kandev cancel %s first", state.ErrOwnerBusy, id, id)
	}
	if err != nil {
		return nil, err
	}
	defer held.Release()
	s, err := held.Update(func(s *state.Session) error {
		s.State = to
		s.LastActivityAt = now.UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, held.Append(&eventlog.Event{Type: eventlog.EventState, State: to})
}

func isNotFound(err error) bool { return err != nil && errorsIs(err, state.ErrNotFound) }
