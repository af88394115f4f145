package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kandev/kandev/state"
)

// reconcileInbox skips a queued input whose turn already started before the
// previous owner died: inputs are served in order, so only the oldest
// pending one can have started, and only as the newest turn of the log.
//
// Control requests left at the head of the inbox targeted the previous
// owner's turn: they are consumed here (a stop still marks the session stopped).
func (o *owner) reconcileInbox(ins []state.Input) {
	for len(ins) > 0 && ins[0].Kind != state.InputPrompt {
		if ins[0].Kind == state.InputStop {
			o.update(func(s *state.Session) { s.Stopped = true })
		}
		if ins[0].Kind == state.InputSet {
			o.recordSet(ins[0]) // owner_setup.go: the restore applies it
		}
		o.consume(ins[0])
		ins = ins[1:]
	}
	if len(ins) == 0 {
		return
	}
	started := ""
	_, _ = state.ScanBackward(o.job.Home.LogPath(o.s.ID), func(line []byte) bool {
		var e state.Event
		if json.Unmarshal(line, &e) == nil && e.Type == state.EventTurnStarted {
			started = e.InputID
			return false
		}
		return true
	})
	if started == ins[0].ID {
		o.consume(ins[0])
	}
}

// stopQueued reports a kandev stop among the control inputs at the head of
// the inbox (those reconcileInbox consumes).
func stopQueued(ins []state.Input) bool {
	for _, in := range ins {
		if in.Kind == state.InputPrompt {
			return false
		}
		if in.Kind == state.InputStop {
			return true
		}
	}
	return false
}

// consume marks inbox input in as served.
func (o *owner) consume(in state.Input) {
	o.update(func(s *state.Session) {
		if in.Offset > s.InboxOffset {
			s.InboxOffset = in.Offset
			s.InboxServed++
		}
	})
}

// serveInbox runs the queued prompts in arrival order until the inbox is
// empty, so no queued input is stranded when the owner exits.
func (o *owner) serveInbox(ctx context.Context) error {
	for {
		ins, err := o.job.Home.ReadInbox(o.s.ID, o.s.InboxOffset)
		if err != nil {
			return err
		}
		if len(ins) == 0 {
			return nil
		}
		for i := range ins {
			in := ins[i]
			switch in.Kind {
			case state.InputPrompt:
				if o.s.Stopped {
					o.update(func(s *state.Session) { s.Stopped = false })
				}
				others := in.ID != o.job.OwnInput
				o.muted.Store(others)
				err := o.turnFor(ctx, state.SourceQueued, in.Text, &in)
				o.muted.Store(false)
				if others && errors.Is(err, ErrAgentFailed) {
					// Not this command's failure: its sender sees it. The rest of
					// the inbox waits for its followers, which take over.
					o.warn(fmt.Sprintf("a prompt queued by another kandev process (%s) failed: %v (its sender reports it too)", in.ID, err))
					return nil
				}
				if err != nil {
					return err
				}
			case state.InputSet:
				o.serveSet(ctx, in) // owner_setup.go
			case state.InputClose:
				// Inputs queued behind a close wait for their senders, who take over.
				o.consume(in)
				o.closing = true
				return nil
			case state.InputStop:
				if !o.acted[in.ID] {
					o.update(func(s *state.Session) { s.Stopped = true })
				}
				o.consume(in)
			default: // a cancel with no turn to cancel
				o.consume(in)
			}
		}
	}
}

// controlRequested reports a cancel, stop or close --now queued since the current turn
// began that has not been acted on yet (Kind "" when none).
func (o *owner) controlRequested() state.Input {
	// Runs while the turn's updates may change the record: read it locked.
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return state.Input{}
	}
	if o.acted == nil {
		o.acted = map[string]bool{}
	}
	for _, in := range ins {
		now := in.Kind == state.InputCancel || in.Kind == state.InputStop || in.Kind == state.InputClose && in.Now
		if now && !o.acted[in.ID] {
			o.acted[in.ID] = true
			return in
		}
	}
	return state.Input{}
}

// warn reports a failure that is not the command's own.
func (o *owner) warn(msg string) {
	if o.job.Warn != nil {
		o.job.Warn(msg)
	}
}
