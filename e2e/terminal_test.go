//go:build unix

package e2e_test

// Client terminals (terminal/*) served to the agent, on the demo agent:
// /terminal asks permission and runs its command in a terminal,
// /terminal! runs it without asking, /terminal& leaves it running.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

func terminalResults(evs []eventlog.Event) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range ofType(evs, eventlog.EventToolResult) {
		if strings.HasPrefix(e.ToolCallID, "terminal-") {
			out = append(out, e)
		}
	}
	return out
}

func TestTerminal_TheAgentRunsACommandInTheSessionDirAndItsOutputIsRecordedRedacted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	secret := "ghp_" + strings.Repeat("Z9y8", 9)
	if err := os.WriteFile(filepath.Join(w.cwd, "key.txt"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, r := w.start("--permissions", "approve-all", "/terminal echo from-the-terminal; pwd; cat key.txt")
	mustOK(t, r)
	cwd, _ := filepath.EvalSymlinks(w.cwd)
	if !strings.Contains(r.stdout, "exit 0: from-the-terminal") || !strings.Contains(r.stdout, cwd) {
		t.Fatalf("the command did not run in a terminal in the session's directory %s: %s", cwd, r)
	}
	res := terminalResults(w.events(id))
	if len(res) != 1 || !strings.Contains(res[0].Content, "from-the-terminal") || res[0].ToolStatus != "completed" {
		t.Fatalf("the terminal's output is not recorded: %+v", res)
	}
	b, _ := os.ReadFile(filepath.Join(w.home, "sessions", id+".jsonl"))
	if strings.Contains(string(b), secret) || strings.Contains(r.stdout, secret) {
		t.Fatalf("the secret the command printed reached the log or the screen")
	}
}

func TestTerminal_RefusedUnderDenyAllAndWithoutAnAllowedRequestInTheTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	for _, c := range []struct{ mode, line, want string }{
		{"deny-all", "/terminal touch ran.txt", "Permission denied"},
		{"deny-all", "/terminal! touch ran.txt", "Could not run touch ran.txt: Invalid params: terminals are refused under the deny-all"},
		{"approve-reads", "/terminal! touch ran.txt", "Could not run touch ran.txt: Invalid params: no request to run a command was allowed in this turn"},
	} {
		id, r := w.start("--permissions", c.mode, c.line)
		mustOK(t, r)
		if !strings.Contains(r.stdout, c.want) {
			t.Fatalf("%s %q: want %q: %s", c.mode, c.line, c.want, r)
		}
		if _, err := os.Stat(filepath.Join(w.cwd, "ran.txt")); err == nil {
			t.Fatalf("%s %q: the command ran", c.mode, c.line)
		}
		if res := terminalResults(w.events(id)); len(res) != 0 {
			t.Fatalf("%s: a refused terminal is recorded as run: %+v", c.mode, res)
		}
	}
	// Asked and allowed in the turn: the terminal that follows runs.
	_, r := w.start("--permissions", "approve-all", "/terminal touch ran.txt")
	mustOK(t, r)
	if _, err := os.Stat(filepath.Join(w.cwd, "ran.txt")); err != nil {
		t.Fatalf("approve-all: the command did not run: %s", r)
	}
}

func TestTerminal_ACommandLeftRunningIsKilledWhenTheTurnEnds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	// The turn lasts 2 s more, so the shell has written its pid before the
	// turn's end kills it, however loaded the machine.
	id, r := w.start("--permissions", "approve-all", "/terminal& echo $$ > term.pid; exec sleep 300\n/sleep 2000")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "Left ") {
		t.Fatalf("the terminal did not start: %s", r)
	}
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(w.cwd, "term.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the command never wrote its pid")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d the turn left running still runs after the turn ended", pid)
	}
	res := terminalResults(w.events(id))
	if len(res) != 1 || !strings.Contains(string(res[0].Data), `"killed":true`) {
		t.Fatalf("the killed terminal is not recorded as killed: %+v", res)
	}
}
