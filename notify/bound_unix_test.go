//go:build unix

package notify

import (
	"os/exec"
	"strconv"
	"testing"
)

// exitErr is the error of a process that exited with code.
func exitErr(t *testing.T, code int) error {
	t.Helper()
	return exec.Command("sh", "-c", "exit "+strconv.Itoa(code)).Run()
}

func TestFailure_TheRunnersStatusSaysHowTheHookFailed(t *testing.T) {
	for _, f := range []*Failure{{Kind: FailExit, Status: 3}, {Kind: FailTimeout}, {Kind: FailStart}, {Kind: FailExit, Status: -1}} {
		code := f.ExitCode()
		back := failureOf(exitErr(t, code), 0)
		if back == nil || back.Kind != f.Kind || (f.Kind == FailExit && back.Status != f.Status) {
			t.Errorf("%+v: status %d read back as %+v", f, code, back)
		}
	}
	if failureOf(nil, 0) != nil {
		t.Error("a hook that succeeded failed")
	}
}
