package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// colourEnv is the world's environment without NO_COLOR.
func (w *world) colourEnv() []string {
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return env
}

// runStdio runs kandev with the given files as its stdio (nil: /dev/null)
// and the given environment, and returns its exit code.
func (w *world) runStdio(env []string, stdin, stdout, stderr *os.File, args ...string) int {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("kandev %v did not finish in time (waiting on a terminal that is not there?)", args)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return 0
}

func openDevNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func createFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fileText(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTerminal_StdoutOnDevNullPutsNoColourInTheStderrLog(t *testing.T) {
	w := newWorld(t)
	log := createFile(t, "kandev.log")
	if code := w.runStdio(w.colourEnv(), openDevNull(t), openDevNull(t), log, "start", "/think pondering"); code != 0 {
		t.Fatalf("exit %d\n%s", code, fileText(t, log))
	}
	got := fileText(t, log)
	if !strings.Contains(got, "agent started") || strings.Contains(got, "\x1b") {
		t.Fatalf("the log has colour codes (or lacks the agent line):\n%q", got)
	}
}

func TestTerminal_ResumeInteractiveWithStdinFromDevNullShowsNoPrompt(t *testing.T) {
	w := newWorld(t)
	id, _ := w.start()
	errLog := createFile(t, "err.log")
	code := w.runStdio(w.env, openDevNull(t), openDevNull(t), errLog, "resume", "-i", id)
	got := fileText(t, errLog)
	if code != 2 || strings.Contains(got, "kandev>") || !strings.Contains(got, "-i needs a terminal on stdin") {
		t.Fatalf("resume -i </dev/null: exit %d, stderr %q", code, got)
	}
}

func TestTerminal_AskModeWithStdinFromDevNullDeniesAndSaysHowToApprove(t *testing.T) {
	w := newWorld(t)
	id, _ := w.start()
	errLog := createFile(t, "err.log")
	code := w.runStdio(w.env, openDevNull(t), openDevNull(t), errLog, "--permissions", "ask", "prompt", id, "/write out.txt from a script")
	got := fileText(t, errLog)
	if code != 0 || strings.Count(got, "--permissions approve-all") != 1 || !strings.Contains(got, "Write out.txt") {
		t.Fatalf("exit %d, stderr:\n%s", code, got)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("ask mode without a terminal allowed the write")
	}
	if res := ofType(w.events(id), "permission_resolved"); len(res) != 1 || strings.HasPrefix(res[0].Content, "selected allow") {
		t.Fatalf("permission answers: %+v", res)
	}
}

func TestTTY_AskModeWithStdinFromDevNullDoesNotAskOnTheTerminal(t *testing.T) {
	w := newWorld(t)
	id, _ := w.start()
	tm := newTmux(t, w, kandevBin+" --permissions ask prompt "+id+" '/write out.txt from a script' </dev/null")
	scr := tm.waitScreen("KANDEV-EXIT-")
	if !strings.Contains(scr, "KANDEV-EXIT-0") || strings.Contains(scr, "[y/N]") || !strings.Contains(scr, "approve-all") {
		t.Fatalf("ask with stdin from /dev/null in a terminal:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("the write was allowed")
	}
}

func TestTTY_ColourOnlyOnTheStreamThatIsATerminal(t *testing.T) {
	w := newWorld(t)
	errLog := filepath.Join(t.TempDir(), "err.log")
	tm := newTmux(t, w, "unset NO_COLOR; "+kandevBin+" start '/think deep thought' 2>"+errLog)
	tm.waitScreen("KANDEV-EXIT-")
	scr := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name, "-S", "-200")
	if !strings.Contains(scr, "\x1b[") || !strings.Contains(scr, "deep thought") {
		t.Fatalf("no colour on the terminal's stdout:\n%q", scr)
	}
	b, _ := os.ReadFile(errLog)
	if !strings.Contains(string(b), "agent started") || bytes.Contains(b, []byte("\x1b")) {
		t.Fatalf("stderr to a file has colour codes (or lacks the agent line): %q", b)
	}
}
