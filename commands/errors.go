// Package commands holds kandev's command-line commands: each parses its
// flags, calls the package that owns the behaviour, and prints the result
// through the one Output writer. Errors become exit codes in ExitCode only.
package commands

import (
	"errors"
	"fmt"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/notify"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// Exit codes (see docs/commands.md).
const (
	ExitOK           = 0
	ExitError        = 1
	ExitUsage        = 2
	ExitConflict     = 3
	ExitNotFound     = 4
	ExitNotResumable = 5
	ExitAgent        = 6
	// ExitWaitingForPermission: the turn waits for kandev approve or deny.
	ExitWaitingForPermission = 7
	// ExitRateLimited: the agent's usage limit was reached.
	ExitRateLimited = 8
	// ExitTimeout: kandev wait gave up (the timeout(1) convention).
	ExitTimeout     = 124
	ExitInterrupted = 130
	ExitTerminated  = 143
)

// ErrUsage marks a usage error (exit 2).
var ErrUsage = errors.New("usage")

// ErrTimeout marks a wait that ran out of time (exit 124).
var ErrTimeout = errors.New("timed out")

// UsageError is a command line kandev cannot run: its message says what
// is wrong with it. errors.Is(err, ErrUsage) is true for it.
type UsageError struct {
	Msg string
	Err error // the cause, if any
}

func (e *UsageError) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap gives the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUsage) true.
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

// usagef builds a usage error.
func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// errReported marks an error whose details the command already printed as
// its JSON answer: exit 1, one line on stderr, no second JSON object.
var errReported = errors.New("reported")

func reportedf(format string, args ...any) error {
	return fmt.Errorf("%s%w", fmt.Sprintf(format, args...), reportedSuffix{})
}

type reportedSuffix struct{}

func (reportedSuffix) Error() string        { return "" }
func (reportedSuffix) Is(target error) bool { return target == errReported }

// ExitCode maps an error to its exit code; the one place that does.
func ExitCode(err error) int {
	var hook *notify.Failure
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &hook):
		// The hidden notify runner tells its owner how the hook failed by its status.
		return hook.ExitCode()
	case errors.Is(err, owner.ErrStorage):
		return ExitError
	case errors.Is(err, ErrUsage), errors.Is(err, state.ErrAmbiguous), errors.Is(err, state.ErrInvalidID), errors.Is(err, config.ErrConfig),
		errors.Is(err, state.ErrPromptTooLarge):
		return ExitUsage
	case errors.Is(err, state.ErrLeaseHeld), errors.Is(err, state.ErrOwnerBusy),
		errors.Is(err, remote.ErrClaimHeld), errors.Is(err, remote.ErrFenced), errors.Is(err, remote.ErrDiverged),
		errors.Is(err, setup.ErrTrustPending):
		return ExitConflict
	case errors.Is(err, state.ErrNotFound), errors.Is(err, acp.ErrUnknownAgent):
		return ExitNotFound
	case errors.Is(err, owner.ErrNotResumable):
		return ExitNotResumable
	case errors.Is(err, owner.ErrAgentFailed), errors.Is(err, acp.ErrAgentNotInstalled):
		return ExitAgent
	case errors.Is(err, owner.ErrInterrupted):
		return ExitInterrupted
	case errors.Is(err, owner.ErrWaitingForPermission):
		return ExitWaitingForPermission
	case errors.Is(err, acp.ErrRateLimited):
		return ExitRateLimited
	case errors.Is(err, ErrTimeout):
		return ExitTimeout
	case errors.Is(err, state.ErrNewerFormat):
		return ExitError
	case errors.Is(err, owner.ErrShutdown):
		return ExitTerminated
	}
	return ExitError
}

// errorCode is the machine-readable code printed with --json.
func errorCode(err error) string {
	if errors.Is(err, state.ErrNewerFormat) {
		return "newer_format"
	}
	switch ExitCode(err) {
	case ExitUsage:
		return "usage"
	case ExitConflict:
		return "conflict"
	case ExitNotFound:
		return "not_found"
	case ExitNotResumable:
		return "not_resumable"
	case ExitAgent:
		return "agent_failure"
	case ExitInterrupted:
		return "interrupted"
	case ExitTerminated:
		return "terminated"
	case ExitWaitingForPermission:
		return "waiting_for_permission"
	case ExitRateLimited:
		return "rate_limited"
	case ExitTimeout:
		return "timeout"
	}
	if errors.Is(err, owner.ErrStorage) {
		return "storage"
	}
	return "error"
}
