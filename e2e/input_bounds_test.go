package e2e_test

// Bounded input, the rest of it: what a remote, an agent, a config or the
// home's own folders bring is checked before it is used.

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor_ChecksTheNotifyCommand: a [notify] command that does not exist
// is a FAIL line naming it, with the fix, and doctor exits 1.
func TestDoctor_ChecksTheNotifyCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hook := filepath.Join(t.TempDir(), "no-such-hook")
	w.config("[notify]\ncommand = [\"" + hook + "\"]\n")
	d := w.run("doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "FAIL  notify: [notify] command "+hook+" does not exist") || !strings.Contains(d.stdout, "fix: set [notify] command") {
		t.Fatalf("doctor with a [notify] command that does not exist: %s", d)
	}
	w.config("[notify]\ncommand = [\"sh\", \"-c\", \"cat\"]\n")
	if d := w.run("doctor"); !strings.Contains(d.stdout, "ok    notify: [notify] command sh -c cat") {
		t.Fatalf("doctor with a working [notify] command: %s", d)
	}
}
