package commands

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

func TestExitCode_SignalsAndStorageErrors(t *testing.T) {
	storage := &owner.StorageError{What: "the log of session s", SessionID: "s", Err: errors.New("no space left on device")}
	cases := []struct {
		err  error
		code int
		json string
	}{
		{fmt.Errorf("%w: turn t1 was stopped by SIGTERM", owner.ErrShutdown), ExitTerminated, "terminated"},
		{owner.ErrInterrupted, ExitInterrupted, "interrupted"},
		{fmt.Errorf("%w: kandev approve s | kandev deny s", owner.ErrWaitingForPermission), ExitWaitingForPermission, "waiting_for_permission"},
		{fmt.Errorf("%w: agent demo reached its usage limit", acp.ErrRateLimited), ExitRateLimited, "rate_limited"},
		{fmt.Errorf("%w: session s is still idle after 1s", ErrTimeout), ExitTimeout, "timeout"},
		{storage, ExitError, "storage"},
		{fmt.Errorf("while serving: %w", storage), ExitError, "storage"},
		{fmt.Errorf("%w: agent died", owner.ErrAgentFailed), ExitAgent, "agent_failure"},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.code)
		}
		if got := errorCode(tc.err); got != tc.json {
			t.Errorf("%v: code %q, want %q", tc.err, got, tc.json)
		}
	}
}

func TestExitCode_EveryKindOfErrorHasItsCode(t *testing.T) {
	cause := errors.New("disk full")
	cases := []struct {
		name string
		err  error
		code int
		json string
	}{
		{"success", nil, ExitOK, ""},
		{"a usage error", usagef("--ttl must be positive"), ExitUsage, "usage"},
		{"a usage error with a cause", &usageError{Err: owner.ErrBadPermissionMode("x")}, ExitUsage, "usage"},
		{"an ambiguous id", fmt.Errorf("%w: two sessions match", state.ErrAmbiguous), ExitUsage, "usage"},
		{"an invalid id", state.ErrInvalidID, ExitUsage, "usage"},
		{"a bad config", &config.ConfigError{Path: "c.toml", Problem: "bad"}, ExitUsage, "usage"},
		{"a lease held by someone else", fmt.Errorf("session s: %w", state.ErrLeaseHeld), ExitConflict, "conflict"},
		{"an owner alive elsewhere", state.ErrOwnerBusy, ExitConflict, "conflict"},
		{"an unknown session", state.ErrNotFound, ExitNotFound, "not_found"},
		{"an unknown agent", acp.ErrUnknownAgent, ExitNotFound, "not_found"},
		{"a finished session", owner.NotResumableState("s", state.StateCompleted), ExitNotResumable, "not_resumable"},
		{"a paused session", &owner.NotResumableError{SessionID: "s", Reason: "paused"}, ExitNotResumable, "not_resumable"},
		{"an agent failure", fmt.Errorf("%w: %w", owner.ErrAgentFailed, cause), ExitAgent, "agent_failure"},
		{"an agent not installed", acp.ErrAgentNotInstalled, ExitAgent, "agent_failure"},
		{"Ctrl-C", owner.ErrInterrupted, ExitInterrupted, "interrupted"},
		{"SIGTERM", owner.ErrShutdown, ExitTerminated, "terminated"},
		{"a newer format", state.ErrNewerFormat, ExitError, "newer_format"},
		{"a storage error wins over what it interrupted", &owner.StorageError{SessionID: "s", Err: fmt.Errorf("%w: %w", owner.ErrAgentFailed, cause)}, ExitError, "storage"},
		{"anything else", cause, ExitError, "error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.code {
				t.Errorf("exit %d, want %d", got, tc.code)
			}
			if tc.err != nil {
				if got := errorCode(tc.err); got != tc.json {
					t.Errorf("code %q, want %q", got, tc.json)
				}
			}
		})
	}
}

func TestErrors_ReadAsOneLineWithoutAKindPrefix(t *testing.T) {
	if got := usagef("--ttl must be positive").Error(); got != "--ttl must be positive" {
		t.Fatalf("usage error reads %q", got)
	}
	want := "not resumable: session s1 is COMPLETED; start a follow-up with: kandev start --parent s1"
	if got := owner.NotResumableState("s1", state.StateCompleted).Error(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
