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
