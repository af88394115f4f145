package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
)

// killSurvivors is a test's safety net: it ends the processes tagged with
// id that a failing test would otherwise leave behind.
func killSurvivors(home, id string) {
	for _, p := range proc.TaggedProcesses(home)[id] {
		kill(p.PID, syscall.SIGKILL)
	}
}

// waitTagged waits until the processes tagged with id include one whose
// command contains each of want, and returns them.
func waitTagged(t *testing.T, w *world, id string, want ...string) []proc.Proc {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		procs := proc.TaggedProcesses(w.home)[id]
		all := true
		for _, w := range want {
			found := false
			for _, p := range procs {
				found = found || strings.Contains(p.Command, w)
			}
			all = all && found
		}
		if all {
			return procs
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of session %s never included %q: %+v", id, want, procs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killOwner SIGKILLs the command cmd and the owner of session id's turn:
// the command itself with --linger 0, else the detached or warm owner it
// follows (the record names it).
func (w *world) killOwner(id string, cmd *exec.Cmd) {
	w.t.Helper()
	if pid := w.session(id).OwnerPID; pid > 0 {
		kill(pid, syscall.SIGKILL)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// A killed owner holds its lock until it has exited: the next command
	// must find it gone, not queue for it.
	waitFor(w.t, 10*time.Second, "the killed owner to be gone", func() bool { return !w.ownerAlive(id) })
}

func TestWrappedAgent_DiesWithItsOwnerWhenTheOwnerIsKilled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		script string
		want   []string // commands running under the session's tag mid-turn
	}{
		{"sh execs the agent", "exec " + kandevBin + " demo-agent", []string{"demo-agent"}},
		{"sh runs the agent as a child next to a background sleep",
			"sleep 1000 & " + kandevBin + " demo-agent; echo agent ended >&2", []string{"sh -c", "demo-agent", "sleep 1000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.config(fmt.Sprintf("[agents.wrapped]\ncommand = [\"sh\", \"-c\", %q]\n", tc.script))
			id, r := w.start("--agent", "wrapped", "/say ready")
			if r.code != 0 {
				t.Fatalf("start: %s", r)
			}
			t.Cleanup(func() { killSurvivors(w.home, id) })
			owner := exec.Command(kandevBin, "prompt", id, "/say working\n/sleep 60000")
			owner.Dir, owner.Env = w.cwd, w.env
			if err := owner.Start(); err != nil {
				t.Fatal(err)
			}
			waitForRunningTurn(t, w, id)
			before := waitTagged(t, w, id, tc.want...)
			w.killOwner(id, owner)

			deadline := time.Now().Add(5 * time.Second)
			for {
				left := proc.TaggedProcesses(w.home)[id]
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("5 s after the owner was killed, processes of the session survive: %+v (mid-turn: %+v)", left, before)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// waitForRunningTurn waits until session id runs a turn the log has begun.
func waitForRunningTurn(t *testing.T, w *world, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := dailyRecord(w.home, id)
		if err == nil && s.State == state.StateRunning && s.CurrentTurn != "" && turnStartedInLog(w.home, id, s.CurrentTurn) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never ran the turn: %+v", id, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDoctor_ReportsAProcessThatOutlivedItsSessionsOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: the subject is a process left after its owner ended.
	id, r := w.start("--linger", "0", "/say done")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	// A process an agent started, left running after its owner died: it
	// carries the agent's environment.
	survivor := exec.Command("sleep", "1000")
	survivor.Env = append(os.Environ(), "KANDEV_HOME="+w.home, proc.SessionTagEnv+"="+id)
	if err := survivor.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { survivor.Process.Kill(); survivor.Wait() })
	pid := strconv.Itoa(survivor.Process.Pid)

	r = w.run("--json", "doctor")
	if r.code != 1 {
		t.Fatalf("doctor with a survivor: want exit 1\n%s", r)
	}
	var d dailyDoctorReport
	decodeJSON(t, r.stdout, &d)
	msg, fix := d.problem(t, "session "+id, "outlived")
	if !strings.Contains(msg, pid+" (sleep 1000)") || fix != "kill "+pid {
		t.Fatalf("doctor: message %q, fix %q; want pid %s running sleep 1000 and kill %s", msg, fix, pid, pid)
	}
	// status looks only after a supervisor that was killed before it ended
	// its agent's tree (TestStatus_FindsWhatOutlivedAKilledSupervisor...);
	// doctor reads every process's environment.

	survivor.Process.Kill()
	survivor.Wait()
	r = w.run("--json", "doctor")
	if strings.Contains(r.stdout, "outlived") {
		t.Fatalf("doctor still reports the survivor after it was killed:\n%s", r)
	}
}
