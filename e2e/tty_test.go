package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxSession runs a shell command in a detached tmux session with its own
// server socket, so tests never touch a user's tmux.
type tmuxSession struct {
	t      *testing.T
	socket string
	name   string
}

func newTmux(t *testing.T, w *world, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("SKIP: tmux is not installed (.ci/run installs it from Debian packages)")
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), name: "kandev"}
	script := fmt.Sprintf("cd %q && export KANDEV_HOME=%q NO_COLOR=1 && %s; echo KANDEV-EXIT-$?; sleep 60", w.cwd, w.home, command)
	// The server, and so the terminal's shell, gets the world's environment
	// (CI=1 of world.underCI included).
	start := exec.Command("tmux", "-S", s.socket, "new-session", "-d", "-s", s.name, "-x", "200", "-y", "50", "sh", "-c", script)
	start.Env = w.env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (s *tmuxSession) screen() string {
	return s.tmux("capture-pane", "-p", "-t", s.name, "-S", "-200")
}

// waitScreen waits until the screen contains want.
func (s *tmuxSession) waitScreen(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxSession) keys(keys ...string) {
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

func TestTTY_ResumeInteractiveReadsPromptsUntilEOF(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: the subject is resume -i restoring the agent and owning it
	// here (on a warm agent it attaches instead).
	id, r := w.start("--linger", "0", "remember PAPAYA")
	if r.code != 0 {
		t.Fatal(r)
	}
	tm := newTmux(t, w, kandevBin+" resume -i "+id)
	tm.waitScreen("kandev>")
	tm.keys("recall", "Enter")
	tm.waitScreen("You asked me to remember: PAPAYA.")
	tm.keys("/say second prompt in the same process", "Enter")
	tm.waitScreen("second prompt in the same process")
	tm.keys("C-d")
	scr := tm.waitScreen("KANDEV-EXIT-")
	if !strings.Contains(scr, "KANDEV-EXIT-0") {
		t.Fatalf("resume -i did not exit 0 on EOF:\n%s", scr)
	}
	// Both prompts ran under one owner: one agent start for the interactive run.
	starts := agentStarts(w.events(id))
	if len(starts) != 2 {
		t.Fatalf("%d agent starts, want 2 (start + one resume)", len(starts))
	}
}

func TestTTY_AskModeAsksOnTheTerminal(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			w := newWorld(t)
			id, _ := w.start()
			tm := newTmux(t, w, kandevBin+" --permissions ask prompt "+id+" '/write out.txt from the terminal'")
			tm.waitScreen("Allow Write out.txt? [y/N") // [y/N] or, where the agent offers it, [y/N/always]
			tm.keys(answer, "Enter")
			scr := tm.waitScreen("KANDEV-EXIT-")
			if !strings.Contains(scr, "KANDEV-EXIT-0") {
				t.Fatalf("exit:\n%s", scr)
			}
			_, err := os.Stat(filepath.Join(w.cwd, "out.txt"))
			if (err == nil) != (answer == "y") {
				t.Fatalf("answer %s: file written=%v\n%s", answer, err == nil, scr)
			}
		})
	}
}

func TestTTY_AskModeWithoutATerminalDenies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.run("--permissions", "ask", "prompt", id, "/write out.txt nope")
	if r.code != 0 {
		t.Fatal(r)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("ask mode without a terminal allowed the write")
	}
}

func TestCrash_KilledWhileAPermissionIsPendingPausesTheContinuation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	tm := newTmux(t, w, kandevBin+" --permissions ask prompt "+id+" '/write out.txt later'")
	tm.waitScreen("Allow Write out.txt? [y/N") // [y/N] or, where the agent offers it, [y/N/always]
	var st struct {
		Status struct{ Badge string }
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "waiting-for-permission" {
		t.Fatalf("badge while asking: %q", st.Status.Badge)
	}
	pid := w.session(id).OwnerPID
	if err := kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the owner to die", func() bool { return !w.ownerAlive(id) })
	r := w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "permission") {
		t.Fatalf("resume after a kill during a permission question: %s", r)
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "paused" {
		t.Fatalf("badge %q, want paused", st.Status.Badge)
	}
	if continuations(w.events(id)) != 0 {
		t.Fatal("continued although a permission was pending")
	}
	// After the pause a plain prompt continues normally.
	if r := w.run("prompt", id, "/say back to work"); r.code != 0 || !strings.Contains(r.stdout, "back to work") {
		t.Fatalf("prompt after the pause: %s", r)
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "idle" {
		t.Fatalf("badge after the prompt: %q", st.Status.Badge)
	}
}

func TestTTY_ResumeInteractiveServesQueuedPromptsWhileWaitingForTheUser(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: resume -i is the owner here (on a warm agent it attaches).
	id, _ := w.start("--linger", "0", "remember QUINCE")
	tm := newTmux(t, w, kandevBin+" resume -i "+id)
	tm.waitScreen("kandev>")
	// Another process queues a prompt while the interactive owner waits for input.
	r := w.run("prompt", id, "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "QUINCE") {
		t.Fatalf("queued prompt during resume -i: %s", r)
	}
	tm.keys("C-d")
	if scr := tm.waitScreen("KANDEV-EXIT-"); !strings.Contains(scr, "KANDEV-EXIT-0") {
		t.Fatalf("exit:\n%s", scr)
	}
}
