//go:build unix

package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// The race of a --steer and a Ctrl-C, made deterministic: the steering
// command stops at a failpoint once its message is queued and before it
// reads a line of the log; the owner joins the message to the running turn
// meanwhile; only then does the command get its Ctrl-C. It must cancel the
// turn its message joined, though it never saw the join (1 in 17 CI runs
// once let that turn run on). A row per place the steering command's own
// owner would run: the default (a detached owner it would start) and
// --linger 0 (in the command).
func TestPromptSteer_CtrlCBetweenTheJoinAndTheFirstReadCancelsTheJoinedTurn(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		name  string
		flags []string
	}{
		{name: "default (detached owner)"},
		{name: "owner in the steering command (--linger 0)", flags: []string{"--linger", "0"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			w := steerWorld(t)
			id, r := w.start("remember APPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			w.closeOnCleanup(id)
			turn, busy := w.busyTurn(id, nil)
			arrived := filepath.Join(t.TempDir(), "arrived")
			cmd := exec.Command(kandevBin, append(append([]string{"prompt", id, "--steer"}, row.flags...), "/say never said")...)
			cmd.Dir = w.cwd
			cmd.Env = append(append([]string{}, w.env...), "KANDEV_FAILPOINT=after-input-queued", "KANDEV_FAILPOINT_FILE="+arrived)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, time.Minute, "the steering command to reach its failpoint", func() bool { _, err := os.Stat(arrived); return err == nil })
			waitFor(t, time.Minute, "the owner to join the message to the turn", func() bool { return len(steered(w.eventsSoFar(id))) == 1 })
			cmd.Process.Signal(os.Interrupt)
			assertSteerCancelled(t, w, id, turn, cmd, busy)
		})
	}
}

// assertSteerCancelled checks, after the steering command cmd got its
// Ctrl-C, that both commands exited 130 and that turn, which its message
// ("/say never said") joined, ended cancelled without answering it.
func assertSteerCancelled(t *testing.T, w *world, id, turn string, cmd *exec.Cmd, busy <-chan result) {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("the steering command after Ctrl-C: %v, want exit 130", err)
	}
	if b := <-busy; b.code != 130 {
		t.Fatalf("the command that started the turn: %s, want exit 130 (cancelled from another process)", b)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, turn); stop != eventlog.StopCancelled {
		t.Fatalf("the turn the message joined ended %q, want cancelled", stop)
	}
	if strings.Contains(agentText(evs, ""), "never said") {
		t.Fatal("the cancelled turn still answered the steered message")
	}
}
