// Package commands holds kandev's command-line commands: each parses its
// flags, calls the package that owns the behaviour, and prints the result
// through the one Output writer. Errors become exit codes in ExitCode only.
package commands

import (
	"errors"
	"fmt"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/agentswitch"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/notify"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// Exit codes: exitCodes below says what each means (docs/reference.md, Exit codes).
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

// usageError is a command line kandev cannot run: its message says what
// is wrong with it. errors.Is(err, ErrUsage) is true for it.
type usageError struct {
	Msg string
	Err error // the cause, if any
}

func (e *usageError) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap gives the cause.
func (e *usageError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUsage) true.
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// usagef builds a usage error.
func usagef(format string, args ...any) error {
	return &usageError{Msg: fmt.Sprintf(format, args...)}
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
		errors.Is(err, state.ErrPromptTooLarge), errors.Is(err, agentswitch.ErrBadAgent):
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

// exitCodes is the one table of exit codes: each code, its machine-readable
// name (the "code" of a --json error) and what it means. The man page and
// docs/reference.md are printed from it.
var exitCodes = []struct {
	code  int
	name  string
	means string
}{
	{ExitOK, "", "Success."},
	{ExitError, "error", "An error (the message says which). A write that failed (a full disk, a read-only home) names the file and the cause and stops a running turn at once: its --json code is storage. Files written by a newer kandev: newer_format."},
	{ExitUsage, "usage", "A usage error: a bad flag or value, an invalid id or ambiguous prefix, a missing choice, a config kandev cannot use, a prompt over 1 MiB."},
	{ExitConflict, "conflict", "Another holder's live lease, an owner busy where the command cannot queue, a session claimed or fenced on the remote, a diverged remote, or a pulled session's MCP servers not yet trusted."},
	{ExitNotFound, "not_found", "No such session or agent, or nothing to answer."},
	{ExitNotResumable, "not_resumable", "Not resumable: a finished session, an invalid worktree, an automatic continuation paused, or a session that spent its [session] max_cost."},
	{ExitAgent, "agent_failure", "The agent failed: not installed or cannot launch (with the install hint), a failed handshake or protocol, a hang, a death mid-turn."},
	{ExitWaitingForPermission, "waiting_for_permission", "Under --permissions defer, a turn waits on a permission request or a question: kandev approve ID, kandev answer ID VALUE or kandev deny ID."},
	{ExitRateLimited, "rate_limited", "The agent refused the turn over its usage or rate limit (badge waiting-for-limit): the line says when it resets, when the agent said so."},
	{ExitTimeout, "timeout", "kandev wait --timeout expired."},
	{ExitInterrupted, "interrupted", "Interrupted by the user: Ctrl-C in this command, or kandev cancel, stop or close --now from another process; the turn is cancelled and never continued automatically. A turn the agent ends cancelled by itself exits 0."},
	{ExitTerminated, "terminated", "Terminated (SIGTERM; Ctrl-Break on Windows): the turn is left for one automatic continuation."},
}

// errorCode is the machine-readable code printed with --json.
func errorCode(err error) string {
	if errors.Is(err, state.ErrNewerFormat) {
		return "newer_format"
	}
	if code := ExitCode(err); code != ExitOK && code != ExitError {
		for _, e := range exitCodes {
			if e.code == code {
				return e.name
			}
		}
	}
	if errors.Is(err, owner.ErrStorage) {
		return "storage"
	}
	return "error"
}
