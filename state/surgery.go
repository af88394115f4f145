package state

import "github.com/kandev/kandev/eventlog"

// Rewind is an epoch fence: from epoch Epoch on, the conversation is what
// the log held up to seq ToSeq (0: nothing, a clear).
type Rewind struct {
	Epoch int   `json:"epoch"`
	ToSeq int64 `json:"to_seq"`
}

// Event is the rewind event that fences the log.
func (r Rewind) Event() *eventlog.Event {
	to := r.ToSeq
	return &eventlog.Event{Type: eventlog.EventRewind, Epoch: r.Epoch, ToSeq: &to}
}

// BeginRewind records the rewind r in s: the agent's session is dropped (the
// next prompt starts a fresh one with the resume context of what is kept, or
// none), an owed continuation and its pause go (an operator decided what
// comes next), and the fence is pending until it is in the log.
func (s *Session) BeginRewind(r Rewind) {
	s.Epoch = r.Epoch
	s.RewindPending = &r
	s.ResumeToken = ""
	s.PendingContext = r.ToSeq > 0
	s.Interrupted, s.Pause = nil, nil
}
