package state

import "github.com/kandev/kandev/eventlog"

// BeginRewind records the rewind r in s: the agent's session is dropped (the
// next prompt starts a fresh one with the resume context of what is kept, or
// none), an owed continuation and its pause go (an operator decided what
// comes next), and the fence is pending until it is in the log.
func (s *Session) BeginRewind(r eventlog.Rewind) {
	s.Epoch = r.Epoch
	s.RewindPending = &r
	s.ResumeToken = ""
	s.PendingContext = r.ToSeq > 0
	s.Interrupted, s.Pause = nil, nil
}
