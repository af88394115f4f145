package commands

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kandev/kandev/acp"
)

func TestExitCode_SignalsAndStorageErrors(t *testing.T) {
	storage := &acp.StorageError{What: "the log of session s", SessionID: "s", Err: errors.New("no space left on device")}
	cases := []struct {
		err  error
		code int
		json string
	}{
		{fmt.Errorf("%w: turn t1 was stopped by SIGTERM", acp.ErrShutdown), ExitTerminated, "terminated"},
		{acp.ErrInterrupted, ExitInterrupted, "interrupted"},
		{storage, ExitError, "storage"},
		{fmt.Errorf("while serving: %w", storage), ExitError, "storage"},
		{fmt.Errorf("%w: agent died", acp.ErrAgentFailed), ExitAgent, "agent_failure"},
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
