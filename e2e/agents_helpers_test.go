package e2e_test

// Helpers shared by the suites that drive real agents installed from npm.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/kandev/kandev/eventlog"
)

// npmInstall installs pkgs (name@version) into dir unless installed says
// they are there already, under a file lock since several test binaries may
// race for it. It returns why it could not, or "".
func npmInstall(dir string, installed func() bool, pkgs ...string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "cannot create the cache folder: " + err.Error()
	}
	lock := flock.New(dir + ".lock")
	if err := lock.Lock(); err != nil {
		return "cannot lock the cache folder: " + err.Error()
	}
	defer lock.Unlock()
	if installed() {
		return ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "npm is not installed; cannot install " + strings.Join(pkgs, " ")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund"}, pkgs...)
	out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput()
	if err != nil || !installed() {
		return fmt.Sprintf("npm install %s failed (%v): %s", strings.Join(pkgs, " "), err, lastLines(string(out), 5))
	}
	return ""
}

// eventsSoFar reads the log of a session that may still be written to.
func (w *world) eventsSoFar(id string) []eventlog.Event {
	evs, _, _ := eventlog.ReadAll(filepath.Join(w.home, "sessions", id+".jsonl"))
	return evs
}

// waitForEvents polls the session's log until ok holds (60 s at most).
func (w *world) waitForEvents(id, what string, ok func([]eventlog.Event) bool) []eventlog.Event {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		evs := w.eventsSoFar(id)
		if ok(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("waited 60 s for %s; log has %d events", what, len(evs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bgProcess is a kandev process the test does not wait for yet.
type bgProcess struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

func (w *world) spawn(args ...string) *bgProcess {
	w.t.Helper()
	b := &bgProcess{done: make(chan struct{})}
	b.cmd = exec.Command(kandevBin, args...)
	b.cmd.Dir, b.cmd.Env = w.cwd, w.env
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		err := b.cmd.Wait()
		b.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			b.code = ee.ExitCode()
		}
		close(b.done)
	}()
	w.t.Cleanup(func() { b.cmd.Process.Kill(); <-b.done })
	return b
}

// wait returns the process's result (90 s at most).
func (b *bgProcess) wait(t *testing.T) result {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("kandev %v did not finish in time\n%s\n%s", b.cmd.Args[1:], b.out.String(), b.err.String())
	}
	return result{b.out.String(), b.err.String(), b.code}
}

// liveProcessesWithEnv are the pids of the live processes (not zombies)
// whose environment holds key=value: an agent and everything it started
// inherit the variables a rig gives it.
func liveProcessesWithEnv(key, value string) []int {
	tag := []byte(key + "=" + value + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if !bytes.Contains(environ, tag) {
			continue
		}
		if st, _ := procState(pid); st != "" && st != "Z" && st != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// procState reads a process's state letter and parent pid.
func procState(pid int) (string, int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return f[0], ppid
}
