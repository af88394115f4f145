package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A change that a SIGTERM meets: either it was not made (exit 143, nothing
// written) or it was made and is reported (exit 0), never made and then
// reported as terminated.

// runTermAfter runs kandev and sends it SIGTERM after d: its exit code, or
// -1 when the signal's default action ended it (before kandev watched for it).
func (w *world) runTermAfter(d time.Duration, args ...string) (int, string) {
	w.t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGTERM) })
	cmd.Wait()
	timer.Stop()
	return cmd.ProcessState.ExitCode(), out.String()
}

func TestRewind_ASIGTERMEitherStopsItBeforeItChangesAnythingOrItExitsZero(t *testing.T) {
	t.Parallel()
	tmpl := newWorld(t)
	tmpl.env = append(tmpl.env, "CI=1")
	id, r := tmpl.start("--linger", "0", "remember ALPHA")
	if r.code != 0 {
		t.Fatal(r)
	}
	tmpl.mustRun("prompt", id, "--linger", "0", "remember BETA")
	began := time.Now()
	tmpl.clone(t).mustRun("clear", id)
	full := time.Since(began)
	seen := map[string]int{}
	lo, hi := time.Duration(0), full*12/10
	for i := 0; i < 12; i++ {
		d := (lo + hi) / 2
		w := tmpl.clone(t)
		code, out := w.runTermAfter(d, "clear", id)
		epoch := w.session(id).Epoch
		switch {
		case code == 143 && epoch != 0:
			t.Fatalf("SIGTERM after %v: exit 143, yet the session was cleared (epoch %d)\n%s", d, epoch, out)
		case code == 0 && epoch != 1:
			t.Fatalf("SIGTERM after %v: exit 0, yet the session is at epoch %d\n%s", d, epoch, out)
		case code != 0 && code != 143 && code != -1:
			t.Fatalf("SIGTERM after %v: exit %d\n%s", d, code, out)
		}
		if code == 0 {
			hi = d
		} else {
			lo = d
		}
		seen[map[int]string{0: "cleared, exit 0", 143: "untouched, exit 143", -1: "killed before kandev watched"}[code]]++
	}
	t.Logf("clear takes %v; SIGTERMs: %v", full.Round(time.Millisecond), seen)
}

func TestSet_ASIGTERMAfterTheChangeIsQueuedExitsZeroAndSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	w.mustRun("prompt", id, "--no-follow", "/sleep 8000")
	waitForRunningTurn(t, w, id)
	cmd := exec.Command(kandevBin, "set", id, "--mode", "code")
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(w.home, "sessions", id+".inbox.jsonl")
	waitFor(t, 10*time.Second, "the change to be queued", func() bool {
		b, _ := os.ReadFile(inbox)
		return bytes.Contains(b, []byte(`"kind":"set"`))
	})
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(out.String(), "queued for the live owner") || !strings.Contains(errb.String(), "SIGTERM") {
		t.Fatalf("a SIGTERM after the change was queued: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	w.run("close", id, "--now")
}
