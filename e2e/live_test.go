package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// closeOnCleanup ends a lingering owner when the test ends, whatever happened.
func (w *world) closeOnCleanup(id string) {
	w.t.Cleanup(func() {
		exec.Command(kandevBin, "--home", w.home, "close", "--now", id).Run()
		killSurvivors(w.home, id)
	})
}

// waitOwnerGone waits until no process holds the session's owner lock.
func (w *world) waitOwnerGone(id string, within time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for w.ownerAlive(id) {
		if time.Now().After(deadline) {
			w.t.Fatalf("the owner of %s is still alive after %s", id, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startWarm starts a session whose owner lingers.
func (w *world) startWarm(linger string, args ...string) string {
	w.t.Helper()
	id, r := w.start(append([]string{"--linger", linger}, args...)...)
	if r.code != 0 {
		w.t.Fatal(r)
	}
	w.closeOnCleanup(id)
	return id
}

// recalls sends "recall" to id and checks the answer names word (the
// prompt reached the conversation that remembered it) and the log has
// starts agent starts (why says which).
func (w *world) recalls(id, word string, starts int, why string) {
	w.t.Helper()
	if r := w.mustRun("prompt", id, "recall"); !strings.Contains(r.stdout, word) {
		w.t.Fatalf("recall did not reach the conversation that remembered %s:\n%s", word, r)
	}
	if n := len(agentStarts(w.events(id))); n != starts {
		w.t.Fatalf("%d agent starts, want %d (%s)", n, starts, why)
	}
}

func TestLinger_WarmPromptReattachesWithoutStartingTheAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember APPLE")
	if !w.ownerAlive(id) {
		t.Fatal("start --linger returned but no owner stayed behind")
	}
	var got struct {
		Status struct {
			Reason, Badge string
			WarmUntil     string `json:"warm_until"`
		} `json:"status"`
	}
	// The command returns at its turn's end; the owner turns warm moments later.
	for deadline := time.Now().Add(10 * time.Second); got.Status.WarmUntil == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		decodeJSON(t, w.mustRun("status", id, "--json").stdout, &got)
	}
	if got.Status.Reason != verdict.ReasonAgentRunning || got.Status.Badge != verdict.BadgeIdle || got.Status.WarmUntil == "" {
		t.Fatalf("status of a warm session: %+v", got.Status)
	}
	w.recalls(id, "APPLE", 1, "the second prompt must reattach")
	if !w.ownerAlive(id) {
		t.Fatal("the warm owner exited after serving the prompt; it should linger")
	}
	// --json ends with the session as the turn left it, not a record a moment behind.
	lines := strings.Split(strings.TrimSpace(w.mustRun("--json", "prompt", id, "hello").stdout), "\n")
	var s state.Session
	decodeJSON(t, lines[len(lines)-1], &s)
	if s.State != state.StateWaitingForInput || s.CurrentTurn != "" {
		t.Fatalf("closing session object: state %s, current turn %q", s.State, s.CurrentTurn)
	}
}

func TestLinger_ExpiryStopsTheAgentAndTheOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("1s", "hello")
	w.waitOwnerGone(id, 20*time.Second)
	evs := w.events(id)
	if last := evs[len(evs)-1]; last.Type != eventlog.EventAgentExited {
		t.Fatalf("last event after linger expiry is %s, want agent_exited", last.Type)
	}
	if s := w.session(id); s.WarmUntil != nil || s.AgentPID != 0 {
		t.Fatalf("record after expiry: warm_until=%v agent_pid=%d", s.WarmUntil, s.AgentPID)
	}
	time.Sleep(600 * time.Millisecond) // the shutdown grace of the agent's supervisor
	if left := proc.TaggedProcesses(w.home)[id]; len(left) > 0 {
		t.Fatalf("processes outlived the linger: %+v", left)
	}
	if st := w.mustRun("status", id); !strings.Contains(st.stdout, "[idle]") {
		t.Fatalf("after expiry the session should be idle:\n%s", st)
	}
}

func TestLinger_PromptThroughAPipeReturnsWhenTheTurnEnds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The pipe's reader only sees end of file once every writer is gone: a
	// lingering owner holding the pipe would keep `cat` (and this) waiting.
	cmd := exec.CommandContext(ctx, "sh", "-c", kandevBin+" prompt "+id+" '/say through the pipe' | cat")
	cmd.Env, cmd.Dir = w.env, w.cwd
	out, err := cmd.CombinedOutput()
	if err != nil || ctx.Err() != nil {
		t.Fatalf("prompt | cat: %v (ctx %v)\n%s", err, ctx.Err(), out)
	}
	if !strings.Contains(string(out), "through the pipe") {
		t.Fatalf("output:\n%s", out)
	}
	if !w.ownerAlive(id) {
		t.Fatal("the owner should still linger after the piped prompt returned")
	}
}

func TestLinger_KilledWarmOwnerTakesItsAgentAndTheNextPromptRestores(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember KIWI")
	s := w.session(id)
	if s.OwnerPID == 0 {
		t.Fatal("no owner pid recorded")
	}
	if err := kill(s.OwnerPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.waitOwnerGone(id, 10*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.TaggedProcesses(w.home)[id]) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent outlived its killed owner: %+v", proc.TaggedProcesses(w.home)[id])
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.recalls(id, "KIWI", 2, "start, then the restore")
}

func TestLinger_TwoPromptsRacingToAWarmOwnerAreEachServedOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.run("prompt", id, "/say racer "+string(rune('A'+i)))
		}()
	}
	wg.Wait()
	for i, r := range results {
		want := "racer " + string(rune('A'+i))
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("prompt %d: %s", i, r)
		}
	}
	evs := w.events(id)
	if n := len(agentStarts(evs)); n != 1 {
		t.Fatalf("%d agent starts, want 1", n)
	}
	if n := len(ofType(evs, eventlog.EventUserMessage)); n != 2 {
		t.Fatalf("%d user messages, want each prompt once", n)
	}
}

func TestLinger_PromptAsTheLingerExpiresIsServedExactlyOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("1s")
	// Send prompts across the moment of expiry: each is served once, by the
	// lingering owner or by the command that finds it gone.
	for i := 0; i < 6; i++ {
		time.Sleep(300 * time.Millisecond)
		w.mustRun("prompt", id, "/say tick")
	}
	n := 0
	for _, e := range ofType(w.events(id), eventlog.EventUserMessage) {
		if e.Content == "/say tick" {
			n++
		}
	}
	if n != 6 {
		t.Fatalf("%d prompts in the log, want 6", n)
	}
}

func TestClose_EndsTheWarmOwnerAndLeavesTheSessionResumable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember FIG")
	r := w.mustRun("close", id)
	if !strings.Contains(r.stdout, "closed") || w.ownerAlive(id) {
		t.Fatalf("close: owner alive=%v\n%s", w.ownerAlive(id), r)
	}
	evs := w.events(id)
	if last := evs[len(evs)-1]; last.Type != eventlog.EventAgentExited {
		t.Fatalf("last event after close is %s, want agent_exited", last.Type)
	}
	time.Sleep(600 * time.Millisecond) // the shutdown grace of the agent's supervisor
	if left := proc.TaggedProcesses(w.home)[id]; len(left) > 0 {
		t.Fatalf("processes outlived close: %+v", left)
	}
	if r := w.mustRun("close", id); !strings.Contains(r.stdout, "nothing to close") {
		t.Fatalf("close with nothing running:\n%s", r)
	}
	if r := w.mustRun("prompt", id, "recall"); !strings.Contains(r.stdout, "FIG") {
		t.Fatalf("prompt after close:\n%s", r)
	}
}

func TestClose_NowCancelsTheRunningTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	w.mustRun("prompt", id, "--no-follow", "/sleep 30000")
	w.mustRun("wait", id, "--until", "running", "--timeout", "20s")
	w.mustRun("close", "--now", id)
	if w.ownerAlive(id) {
		t.Fatal("close --now returned with the owner alive")
	}
	ends := ofType(w.events(id), eventlog.EventTurnEnded)
	if stop := ends[len(ends)-1].StopReason; stop != eventlog.StopCancelled {
		t.Fatalf("the running turn ended with %q, want cancelled", stop)
	}
	if st := w.mustRun("status", id); !strings.Contains(st.stdout, "[idle]") {
		t.Fatalf("after close --now:\n%s", st)
	}
}

func TestWait_ReturnsAtTheBadgeAndExits124OnTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	w.mustRun("prompt", id, "--no-follow", "/sleep 1500")
	r := w.mustRun("wait", id, "--until", "running", "--timeout", "20s")
	if !strings.Contains(r.stdout, "running") {
		t.Fatalf("wait --until running:\n%s", r)
	}
	r = w.mustRun("wait", id, "--until", "idle,done", "--json", "--timeout", "20s")
	var st struct{ Badge, Reason string }
	decodeJSON(t, r.stdout, &st)
	if st.Badge != verdict.BadgeIdle || st.Reason != verdict.ReasonAgentRunning {
		t.Fatalf("wait --json: %+v", st)
	}
	r = w.run("wait", id, "--until", "done", "--timeout", "300ms")
	if r.code != 124 || !strings.Contains(r.stderr, "still idle") {
		t.Fatalf("wait that times out: %s", r)
	}
	if r := w.run("wait", id, "--until", "sleepy"); r.code != 2 {
		t.Fatalf("unknown badge: %s", r)
	}
}

func TestDefer_ParksTheWriteExits7AndApproveContinuesTheTurnInTheOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("0s", "--permissions", "defer")
	r := w.run("--permissions", "defer", "prompt", id, "/write out.txt APPROVED")
	if r.code != 7 || !strings.Contains(r.stderr, "kandev approve "+id) || !strings.Contains(r.stderr, "kandev deny "+id) {
		t.Fatalf("a parked request: %s", r)
	}
	if !w.ownerAlive(id) {
		t.Fatal("the owner must keep the parked turn open")
	}
	st := w.mustRun("status", id)
	if !strings.Contains(st.stdout, "[waiting-for-permission]") {
		t.Fatalf("status of a parked turn:\n%s", st)
	}
	req := ofType(w.events(id), eventlog.EventPermissionRequest)
	if len(req) != 1 || !req[0].Deferred || len(req[0].Data) == 0 {
		t.Fatalf("the parked request is logged with its options: %+v", req)
	}
	w.mustRun("approve", id)
	waitFor(t, 20*time.Second, "the approved turn to end", func() bool {
		evs := w.eventsSoFar(id)
		return turnEnd(evs, lastTurn(evs)) != ""
	})
	b, err := os.ReadFile(filepath.Join(w.cwd, "out.txt"))
	if err != nil || string(b) != "APPROVED" {
		t.Fatalf("approved write: %q %v", b, err)
	}
	if last := lastOf(t, ofType(w.events(id), eventlog.EventTurnEnded), "turn_ended"); last.StopReason != eventlog.StopEndTurn {
		t.Fatalf("the approved turn ended with %s", last.StopReason)
	}
	if r := w.run("approve", id); r.code != 4 {
		t.Fatalf("approve with nothing pending: %s", r)
	}
}

func TestDefer_DenyRejectsAndReadsNeedNoAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "defer")
	if err := os.WriteFile(filepath.Join(w.cwd, "in.txt"), []byte("readable"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := w.mustRun("--permissions", "defer", "prompt", id, "/read in.txt"); !strings.Contains(r.stdout, "readable") {
		t.Fatalf("a read under defer: %s", r)
	}
	if r := w.run("deny", id); r.code != 4 {
		t.Fatalf("deny with nothing pending: %s", r)
	}
	if r := w.run("--permissions", "defer", "prompt", id, "/write out.txt NO"); r.code != 7 {
		t.Fatalf("a parked write: %s", r)
	}
	w.mustRun("deny", id)
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("a denied write happened")
	}
	res := ofType(w.events(id), eventlog.EventPermissionResolved)
	if last := res[len(res)-1]; !strings.Contains(string(last.Data), `"allowed":false`) {
		t.Fatalf("deny resolved as %s", last.Data)
	}
}

func TestDefer_UnansweredRequestIsDeniedAfterTheTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[permissions]\ndefer_timeout_seconds = 1\n")
	id := w.startWarm("60s", "--permissions", "defer")
	if r := w.run("--permissions", "defer", "prompt", id, "/write out.txt LATE"); r.code != 7 {
		t.Fatalf("a parked write: %s", r)
	}
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("a write nobody approved happened")
	}
	found := false
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		found = found || m.Kind == "permission_timeout"
	}
	if !found {
		t.Fatal("no permission_timeout marker after the defer timeout")
	}
}

func TestAttach_ShowsTheLastTurnsSendsTypedLinesAndDetachesOnCtrlC(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember MANGO")
	// The shell outlives the Ctrl-C (a trap with a command is not inherited), so the exit code shows.
	tm := newTmux(t, w, "trap true INT; "+kandevBin+" attach "+id)
	tm.waitScreen("OK, I will remember MANGO.")
	tm.waitScreen("Ctrl-C detaches")
	tm.keys("recall", "Enter")
	tm.waitScreen("You asked me to remember: MANGO.")
	tm.keys("C-c")
	scr := tm.waitScreen("KANDEV-EXIT-")
	if !strings.Contains(scr, "KANDEV-EXIT-0") {
		t.Fatalf("attach did not detach cleanly on Ctrl-C:\n%s", scr)
	}
	if !w.ownerAlive(id) {
		t.Fatal("detaching ended the owner")
	}
	if n := len(agentStarts(w.events(id))); n != 1 {
		t.Fatalf("%d agent starts, want 1: attach reattaches", n)
	}
}

func TestResume_WithLingerLeavesAWarmOwnerThatServesTheNextPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: resume must find no owner, so that it restores the agent.
	id, r := w.start("--linger", "0", "remember LIME")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	r = w.mustRun("resume", id, "--linger", "60s")
	if !strings.Contains(r.stdout, "restored (resume)") || !w.ownerAlive(id) {
		t.Fatalf("resume --linger: owner alive=%v\n%s", w.ownerAlive(id), r)
	}
	w.recalls(id, "LIME", 2, "start, resume: the prompt is served warm")
}
