package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
)

// agentLockSize is the size of session id's agent lock file: its supervisor
// marks it while the agent runs and empties it once the agent's tree is gone.
func agentLockSize(t *testing.T, w *world, id string) int64 {
	t.Helper()
	st, err := os.Stat(filepath.Join(w.home, "sessions", id+".agent.lock"))
	if err != nil {
		t.Fatalf("agent lock of %s: %v", id, err)
	}
	return st.Size()
}

func statusSurvivors(t *testing.T, w *world, id string) []proc.Proc {
	t.Helper()
	var st struct {
		Status struct {
			Survivors []proc.Proc `json:"survivors"`
		} `json:"status"`
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	return st.Status.Survivors
}

// status and the next owner read every process's environment only when a
// supervisor was killed before it could end its agent's tree (its agent lock
// is left marked): after a clean end there is nothing to look for, and when
// the supervisor itself was SIGKILLed (here with its owner, as the OOM
// killer might) what its agent started is found and ended.
func TestStatus_FindsWhatOutlivedAKilledSupervisorAndThePromptAfterEndsIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.wrapped]\ncommand = [\"sh\", \"-c\", \"sleep 1000 & exec " + kandevBin + " demo-agent\"]\n")
	// --linger 0: the first subject is the clean end of an owner and its agent.
	id, r := w.start("--linger", "0", "--agent", "wrapped", "/say ready")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	t.Cleanup(func() { killSurvivors(w.home, id) })
	// The clean end: the supervisor ended the background sleep and emptied its mark.
	deadline := time.Now().Add(5 * time.Second)
	for w.run("status", id).code == 0 && agentLockSize(t, w, id) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := agentLockSize(t, w, id); n != 0 {
		t.Fatalf("after a clean end the agent lock still holds %d bytes", n)
	}
	if s := statusSurvivors(t, w, id); len(s) != 0 {
		t.Fatalf("survivors after a clean end: %+v", s)
	}

	owner := exec.Command(kandevBin, "prompt", id, "/say working\n/sleep 60000")
	owner.Dir, owner.Env = w.cwd, w.env
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	waitForRunningTurn(t, w, id)
	waitTagged(t, w, id, "sleep 1000", "demo-agent")
	if agentLockSize(t, w, id) == 0 {
		t.Fatal("the supervisor of a running agent left its lock unmarked")
	}
	s, err := dailyRecord(w.home, id)
	if err != nil || s.AgentPID == 0 {
		t.Fatalf("record of the running session: %+v, %v", s, err)
	}
	// The supervisor first (its agent, sh, dies with it; the sleep and the
	// demo agent are orphaned), then the owner.
	if err := syscall.Kill(s.AgentPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.killOwner(id, owner)

	var sleep proc.Proc
	deadline = time.Now().Add(10 * time.Second)
	for sleep.PID == 0 {
		for _, p := range statusSurvivors(t, w, id) {
			if strings.Contains(p.Command, "sleep 1000") {
				sleep = p
			}
		}
		if sleep.PID == 0 && time.Now().After(deadline) {
			t.Fatalf("status never showed the sleep that outlived the killed supervisor; tagged: %+v", proc.TaggedProcesses(w.home)[id])
		}
		time.Sleep(50 * time.Millisecond)
	}

	// --linger 0: after it, no agent of the session may be left (a warm
	// owner would keep its new one).
	if r := w.run("prompt", "--linger", "0", id, "/say again"); r.code != 0 || !strings.Contains(r.stdout, "again") {
		t.Fatalf("prompt after the killed supervisor: %s", r)
	}
	recovered := false
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		recovered = recovered || m.Kind == "session_recovered"
	}
	if !recovered {
		t.Fatal("the prompt after the killed supervisor logged no session_recovered marker")
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		left := proc.TaggedProcesses(w.home)[id]
		if len(left) == 0 && agentLockSize(t, w, id) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the next prompt: tagged %+v, agent lock %d bytes; want none and 0", left, agentLockSize(t, w, id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := statusSurvivors(t, w, id); len(s) != 0 {
		t.Fatalf("survivors after the next prompt: %+v", s)
	}
}
