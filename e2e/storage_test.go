package e2e_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// tmpfsWorld is a world whose home is a small tmpfs, or a visible skip
// where mounting is not allowed.
func tmpfsWorld(t *testing.T, size string) *world {
	t.Helper()
	w := newWorld(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", w.home).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs home (%v: %s); needs root or CAP_SYS_ADMIN", err, strings.TrimSpace(string(out)))
	}
	// What the test left running in the home ends before it is unmounted.
	t.Cleanup(func() { endOwners(w.home); exec.Command("umount", "-l", w.home).Run() })
	return w
}

// interrupted starts a session and kills its owner mid-turn.
func interrupted(w *world) string {
	w.t.Helper()
	id, r := w.start()
	if r.code != 0 {
		w.t.Fatal(r)
	}
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
	if s := w.session(id); s.CurrentTurn == "" {
		w.t.Fatalf("no interrupted turn: %+v", s)
	}
	return id
}

// assertFailsWith checks a command exits 1 with one stderr line naming cause.
func assertFailsWith(t *testing.T, r result, cause string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], cause) {
		t.Fatalf("want exit 1 and one line naming %q: %s", cause, r)
	}
}

func TestStopRepairDone_FullDiskExitOneWithNoSpaceLeftAndRecoverOnceSpaceIsBack(t *testing.T) {
	t.Parallel()
	w := tmpfsWorld(t, "2m")
	id := interrupted(w)
	filler := filepath.Join(w.home, "filler")
	f, _ := os.Create(filler)
	for block := make([]byte, 4096); ; {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	for _, cmd := range []string{"stop", "repair", "done"} {
		assertFailsWith(t, w.run(cmd, id), "no space left on device")
	}
	os.Remove(filler)
	w.mustRun("stop", id)
	if r := w.mustRun("repair", id); !strings.Contains(r.stdout, "nothing to repair") {
		t.Fatalf("the stop did not close the turn: %s", r)
	}
	assertNoSeqGap(t, w.events(id))
	if r := w.mustRun("doctor"); strings.Contains(r.stdout, "session "+id) {
		t.Fatalf("doctor after space came back: %s", r)
	}
	w.mustRun("resume", id)
	if continuations(w.events(id)) != 0 {
		t.Fatal("a session stopped after a full disk was continued")
	}
}

func TestStopRepairDone_ReadOnlyHomeExitOneNamingTheCause(t *testing.T) {
	t.Parallel()
	w := tmpfsWorld(t, "8m")
	id := interrupted(w)
	if out, err := exec.Command("mount", "-o", "remount,ro", w.home).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot remount the home read-only (%v: %s)", err, out)
	}
	for _, cmd := range []string{"stop", "repair", "done"} {
		assertFailsWith(t, w.run(cmd, id), "read-only file system")
	}
	if out, err := exec.Command("mount", "-o", "remount,rw", w.home).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	w.mustRun("stop", id)
	if s := w.session(id); !s.Stopped || s.CurrentTurn != "" {
		t.Fatalf("after the home became writable: %+v", s)
	}
}

func TestDoctor_FlagsALogWhoseSeqRepeats(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: the log is damaged by hand, which no live owner expects
	// (doctor leaves a live session's log to its owner).
	id, _ := w.start("--linger", "0")
	if r := w.run("doctor"); strings.Contains(r.stdout, "seq") {
		t.Fatalf("a healthy log: %s", r)
	}
	path := filepath.Join(w.home, "sessions", id+".jsonl")
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(lines[len(lines)-1] + "\n") // the last event once more: seq repeats
	f.Close()
	r := w.run("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "seq repeats or goes back") {
		t.Fatalf("doctor on a repeated seq: %s", r)
	}
}

func TestHome_WithNeitherKANDEV_HOMENorHOMEKandevStops(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "KANDEV_HOME=") {
			env = append(env, kv)
		}
	}
	w.env = env
	assertFailsWith(t, w.run("list"), "neither KANDEV_HOME nor HOME is set")
	if _, err := os.Stat(filepath.Join(w.cwd, ".kandev")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("kandev made a home in the current directory")
	}
}

func TestImport_KeepIDSucceedsOverTheLeftoversOfAKilledImport(t *testing.T) {
	t.Parallel()
	src := newWorld(t)
	id, _ := src.start()
	bundle := filepath.Join(t.TempDir(), "s.kandev.jsonl")
	os.WriteFile(bundle, []byte(src.mustRun("export", id).stdout), 0o600)

	w := newWorld(t)
	w.mustRun("import", "--keep-id", bundle)
	// What an import killed after writing the log and before the record
	// leaves: the log, the lock file, and the temp file of the record.
	sessions := filepath.Join(w.home, "sessions")
	os.Remove(filepath.Join(sessions, id+".json"))
	temp := filepath.Join(sessions, "."+id+".json.tmp12345")
	os.WriteFile(temp, []byte(`{"id":`), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(temp, old, old)
	if r := w.run("--json", "list"); strings.Contains(r.stdout, id) {
		t.Fatalf("a half import is listed: %s", r)
	}
	r := w.run("doctor")
	if !strings.Contains(r.stdout, id+".jsonl is an event log with no session record") || !strings.Contains(r.stdout, temp) {
		t.Fatalf("doctor does not report the leftovers: %s", r)
	}
	w.mustRun("import", "--keep-id", bundle)
	if s := w.session(id); s.ID != id {
		t.Fatalf("record %+v", s)
	}
	assertNoSeqGap(t, w.events(id))
	w.mustRun("prune")
	if _, err := os.Stat(temp); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("prune kept the stale temp file")
	}
	if r := w.run("import", "--keep-id", bundle); r.code != 3 {
		t.Fatalf("a complete session must not be replaced: %s", r)
	}
}

// A warm owner's write that does not fit ends the turn with "error" and
// the write's cause in the record; the prompt following it must report the
// disk (exit 1), neither blame the agent (exit 6) nor succeed without the
// reply. The agent's reply is one chunk larger than the room left, so that
// write fails whole and the turn's end still fits after it; the agent
// keeps its own files outside the full home, so nothing fails on its side.
// The turn ends right after the reply, or the agent is still at work when
// the owner notices.
func TestStorage_AFullDiskUnderAWarmOwnerIsReportedAsTheDiskNotTheAgent(t *testing.T) {
	t.Parallel()
	const room = 64 << 10
	reply := "/stream 262144 " + strings.Repeat("word ", 40<<10) // 200 KiB in one chunk: more than room
	for _, then := range []struct{ name, lines string }{{"the turn ends with the reply", ""}, {"the agent works on", "\n/sleep 1000"}} {
		for _, args := range [][]string{{"prompt"}, {"prompt", "--linger", "60s"}} {
			t.Run(strings.Join(args, " ")+", "+then.name, func(t *testing.T) {
				w := tmpfsWorld(t, "4m")
				w.config(fmt.Sprintf("[agents.apart]\ncommand = [%q, \"--home\", %q, \"demo-agent\"]\n", kandevBin, t.TempDir()))
				id := w.startWarm("60s", "--agent", "apart", "hello")
				cmd := exec.Command(kandevBin, append(args, id, "-")...)
				cmd.Dir, cmd.Env = w.cwd, w.env
				cmd.Stdin = strings.NewReader("/sleep 2000\n" + reply + then.lines)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// The prompt is on disk and sent; the agent sleeps: now fill the disk.
				waitFor(t, 20*time.Second, "the second prompt to be sent", func() bool { return len(ofType(w.eventsSoFar(id), eventlog.EventPromptSent)) == 2 })
				filler := fillDisk(t, w.home)
				st, _ := os.Stat(filler)
				if err := os.Truncate(filler, st.Size()-room); err != nil {
					t.Fatal(err)
				}
				code := exitOf(t, cmd, 30*time.Second)
				evs := w.events(id)
				if end := turnEnd(evs, lastTurn(evs)); end != eventlog.StopError {
					t.Fatalf("the turn whose reply did not fit ended %q, want %q; exit %d\n%s", end, eventlog.StopError, code, stderr.String())
				}
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if code != 1 || !strings.Contains(lines[len(lines)-1], "no space left on device") {
					t.Fatalf("a full disk during a warm owner's turn: exit %d (want 1, the error naming the disk)\n%s", code, stderr.String())
				}
			})
		}
	}
}
