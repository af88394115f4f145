package owner

import (
	"context"
	"errors"
	"fmt"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// interruption is the error for ctx's end: ErrShutdown when the command was
// terminated (SIGTERM), else ErrInterrupted (Ctrl-C).
func interruption(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrShutdown) {
		return ErrShutdown
	}
	return ErrInterrupted
}

// settleUserCancel leaves nothing for a resume after a Ctrl-C, which is the
// user's decision: an initial prompt not yet sent to the agent is dropped
// (never sent later), and a start cut off during the agent's launch waits
// for input. A prompt that was sent is a turn cancelled like any other.
func (o *owner) settleUserCancel() {
	o.dropUnsentFollowUp()
	s := o.session()
	if s.InitialPrompt == "" && s.State != state.StateStarting && s.State != state.StateCreated {
		return
	}
	o.update(func(s *state.Session) {
		s.InitialPrompt = ""
		if s.State == state.StateStarting || s.State == state.StateCreated {
			s.State = state.StateWaitingForInput
		}
	})
	if s.InitialPrompt != "" && !o.droppedUnsent {
		o.marker(history.MarkerPromptCancel, "The first prompt was cancelled (Ctrl-C) before it was sent to the agent; it will not be sent.", "")
	}
}

// dropUnsentFollowUp: a Ctrl-C before the planned follow-up of an
// interrupted turn (its continuation, or its message sent again) was sent
// cancels that follow-up, as a Ctrl-C while it runs would: it is recorded
// as the turn's one follow-up and never sent.
func (o *owner) dropUnsentFollowUp() {
	p := o.plan
	turn := p.Continuation.Turn
	if p.FollowUp == FollowNothing || turn == "" || o.session().ContinuedTurn == turn {
		return
	}
	o.markFollowedUp(turn)
	o.marker(history.MarkerPromptCancel, "The follow-up of interrupted turn "+turn+" was cancelled (Ctrl-C) before it was sent to the agent; it will not be sent.", "")
}

// aborted reports whether the owner was told to stop at once.
func (o *owner) aborted() bool {
	select {
	case <-o.job.Abort:
		return true
	default:
		return false
	}
}

// shutdownError is what a turn cut short by SIGTERM returns.
func (o *owner) shutdownError(turnID string) error {
	return fmt.Errorf("%w: turn %s of session %s was stopped by SIGTERM; kandev resume %s continues it", ErrShutdown, turnID, o.s.ID, o.s.ID)
}

// leaveForContinuation closes a turn cut short by SIGTERM with the repair
// the next owner would run (unknown-outcome tool results, turn_ended with
// stop_reason shutdown), after a marker that says why, and leaves the turn
// owed its one continuation by the next resume, prompt or recover. After
// an abort nothing is written: the next owner repairs the turn.
func (o *owner) leaveForContinuation(turnID string) {
	defer func() {
		o.mu.Lock()
		o.turnID, o.onAccept, o.onSent = "", nil, nil
		o.mu.Unlock()
	}()
	if o.aborted() {
		return
	}
	if o.conn != nil {
		o.conn.Barrier(nil) // everything the agent sent is in the log first
	}
	o.marker(history.MarkerPromptInterrupted, "kandev was terminated (SIGTERM) during turn "+turnID+"; the next kandev resume, prompt or recover continues it once.", "")
	turn := o.s.CurrentTurn
	o.repairInterrupted(RepairTurn(TurnEvents(o.job.Home.LogPath(o.s.ID), turn), turn, eventlog.StopShutdown))
}
