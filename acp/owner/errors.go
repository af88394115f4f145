package owner

import "errors"

// Errors Run returns, mapped to exit codes by commands.
var (
	ErrAgentFailed  = errors.New("agent failure")
	ErrInterrupted  = errors.New("interrupted")
	ErrNotResumable = errors.New("not resumable")
	// ErrShutdown ends a command that was terminated (SIGTERM): its running
	// turn is left for one automatic continuation.
	ErrShutdown = errors.New("terminated")
)

// NotResumableError says why a session cannot be resumed and what to do
// instead; errors.Is(err, ErrNotResumable) is true for it.
type NotResumableError struct {
	SessionID string
	State     string // the session's state when that is the reason ("DONE", ...)
	Reason    string // what stands in the way
	Advice    string // the command to run instead; "" for none
}

// NotResumableState is the refusal of a session in a terminal state.
func NotResumableState(id, st string) *NotResumableError {
	return &NotResumableError{SessionID: id, State: st, Reason: "session " + id + " is " + st,
		Advice: "start a follow-up with: kandev start --parent " + id}
}

func (e *NotResumableError) Error() string {
	msg := ErrNotResumable.Error() + ": " + e.Reason
	if e.Advice != "" {
		msg += "; " + e.Advice
	}
	return msg
}

// Is makes errors.Is(err, ErrNotResumable) true.
func (e *NotResumableError) Is(target error) bool { return target == ErrNotResumable }
