//go:build unix

package e2e_test

import (
	"strings"
	"testing"
)

func TestCtrlC_PrintsOneLineForTheCancelledTurn(t *testing.T) {
	t.Parallel()
	// The default (a detached owner this command follows) and an owner in the command.
	for _, linger := range []string{"", "0"} {
		w := newWorld(t)
		args := []string{"start", "/say working\n/sleep 30000"}
		if linger != "" {
			args = append([]string{"start", "--linger", linger}, args[1:]...)
		}
		tm := w.inTerminal(args...)
		tm.waitScreen("working")
		tm.keys("C-c")
		if code := terminalExit(tm); code != "130" {
			t.Fatalf("linger %q: exit %s, want 130:\n%s", linger, code, tm.screen())
		}
		scr := tm.screen()
		after := scr[strings.Index(scr, "working")+len("working") : strings.Index(scr, "KANDEV-EXIT-")]
		var lines []string
		for _, l := range strings.Split(after, "\n") {
			if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "^C")); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "cancelled") || !strings.Contains(lines[0], "kandev prompt ") {
			t.Fatalf("linger %q: Ctrl-C printed %d lines, want one saying the turn was cancelled and what next:\n%s", linger, len(lines), scr)
		}
	}
}

// The demo agent's refusal of a pulled session's token is said in words (the
// restore falls back to a fresh session with the history).
func TestPull_TheFirstPromptAfterItPrintsNoRawJSONRPC(t *testing.T) {
	t.Parallel()
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := a.mustStart("remember apple")
	a.mustRun("push", id)
	b.mustRun("pull", id)
	p := b.mustRun("prompt", id, "recall")
	if strings.Contains(p.stdout+p.stderr, "jsonrpc") || strings.Contains(p.stdout+p.stderr, `{"code"`) {
		t.Fatalf("the first prompt after a pull printed raw JSON-RPC:\n%s", p)
	}
}
