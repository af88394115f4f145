package remote

import (
	"errors"
	"fmt"
	"time"
)

// Typed errors; commands map them to exit codes.
var (
	// ErrClaimHeld: another machine holds a live claim (exit 3).
	ErrClaimHeld = errors.New("claimed by another machine")
	// ErrFenced: this machine's claim was taken over; it may not push (exit 3).
	ErrFenced = errors.New("fenced")
	// ErrDiverged: both sides appended since they last agreed (exit 3).
	ErrDiverged = errors.New("diverged")
	// ErrUnredacted: a session file holds what looks like a secret (exit 1).
	ErrUnredacted = errors.New("not redacted")
	// ErrNoRemote: kandev cannot tell where to push or pull (exit 1).
	ErrNoRemote = errors.New("no remote")
)

// ClaimHeldError names the machine that runs the session and until when.
type ClaimHeldError struct {
	ID        string
	Machine   string
	ExpiresAt time.Time
}

func (e *ClaimHeldError) Error() string {
	return fmt.Sprintf("session %s is claimed by machine %s until %s: it runs there; try again after that, or stop it there", e.ID, e.Machine, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrClaimHeld) true.
func (e *ClaimHeldError) Is(target error) bool { return target == ErrClaimHeld }

// FencedError: the claim this machine held was taken over.
type FencedError struct {
	ID         string
	Machine    string
	Generation int64
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("session %s was taken over by machine %s (claim generation %d): this machine's copy is not pushed; kandev pull %s takes the newer one, kandev fork %s keeps this one as a new session", e.ID, e.Machine, e.Generation, e.ID, e.ID)
}

// Is makes errors.Is(err, ErrFenced) true.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// DivergedError: both machines appended to the session while apart.
type DivergedError struct {
	ID, URL string
	// OpenTurn: this machine's copy ends in a turn cut off here, which a
	// fork holds once kandev repair has closed it.
	OpenTurn bool
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("session %s has diverged: this machine and %s both added events since they last agreed; nothing was changed. Keep both: %s", e.ID, e.URL, keepBoth(e.ID, e.OpenTurn))
}

// Is makes errors.Is(err, ErrDiverged) true.
func (e *DivergedError) Is(target error) bool { return target == ErrDiverged }

// PullBoundError is a pull that would append more than [sync]
// max_pull_bytes to a log; nothing of it is written (exit 1).
type PullBoundError struct {
	ID, URL string
	Bound   int64
	// Over is how many bytes the remote's log had added when the bound
	// was passed (at least that many).
	Over int64
}

func (e *PullBoundError) Error() string {
	return fmt.Sprintf("session %s on %s: the remote's log adds at least %d bytes to this machine's, over [sync] max_pull_bytes = %d; nothing of it was written here (raise max_pull_bytes if that log is yours, or ask whoever can push to the remote)", e.ID, e.URL, e.Over, e.Bound)
}
