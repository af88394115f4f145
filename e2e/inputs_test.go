package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// resolutions are the permission_resolved events' data of the session.
func (w *world) resolutions(id string) []map[string]any {
	var out []map[string]any
	for _, e := range ofType(w.events(id), eventlog.EventPermissionResolved) {
		var d map[string]any
		json.Unmarshal(e.Data, &d)
		d["request_id"] = e.RequestID
		out = append(out, d)
	}
	return out
}

// parked is the status's list of parked permission requests.
func (w *world) parked(id string) []state.ParkedRequest {
	w.t.Helper()
	var got struct {
		Status struct {
			PermissionRequests []state.ParkedRequest `json:"permission_requests"`
		} `json:"status"`
	}
	decodeJSON(w.t, w.mustRun("status", id, "--json").stdout, &got)
	return got.Status.PermissionRequests
}

func TestQueued_APromptRunsUnderItsSendersPermissionModeNotTheWarmOwners(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "approve-all")
	r := w.run("--permissions", "deny-all", "prompt", id, "/write secret.txt X")
	if r.code != 0 {
		t.Fatalf("a denied write under deny-all: %s", r)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "secret.txt")); err == nil {
		t.Fatal("a prompt sent with --permissions deny-all had its write approved by the owner's approve-all")
	}
	res := w.resolutions(id)
	if len(res) != 1 || res[0]["allowed"] != false || res[0]["mode"] != "deny-all" {
		t.Fatalf("resolution of the deny-all turn: %+v", res)
	}
	// defer: the request is parked for an answer, not decided by the owner's mode.
	r = w.run("--permissions", "defer", "prompt", id, "/write parked.txt Y")
	if r.code != 7 || !strings.Contains(r.stderr, "kandev approve "+id) {
		t.Fatalf("a write under defer sent to an approve-all owner: %s", r)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "parked.txt")); err == nil {
		t.Fatal("the parked write happened before anyone approved it")
	}
	p := w.parked(id)
	if len(p) != 1 || !strings.HasPrefix(p[0].ID, "rq-") {
		t.Fatalf("status lists the parked request: %+v", p)
	}
	w.mustRun("approve", id, "--request", p[0].ID)
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	if b, _ := os.ReadFile(filepath.Join(w.cwd, "parked.txt")); string(b) != "Y" {
		t.Fatalf("approved write: %q", b)
	}
	// The owner's own mode is still its own for a prompt that says approve-all.
	w.mustRun("--permissions", "approve-all", "prompt", id, "/write mine.txt Z")
	if b, _ := os.ReadFile(filepath.Join(w.cwd, "mine.txt")); string(b) != "Z" {
		t.Fatalf("approve-all write: %q", b)
	}
	if n := len(agentStarts(w.events(id))); n != 1 {
		t.Fatalf("%d agent starts, want 1: every prompt was served warm", n)
	}
}

func TestQueued_LingerChangesTheWarmOwnersLingerAndResumeRefusesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "hello")
	if r := w.run("resume", id, "--linger", "10m"); r.code != 3 || !strings.Contains(r.stderr, "--linger") {
		t.Fatalf("resume --linger on a live owner must not be ignored: %s", r)
	}
	if r := w.run("resume", id, "--no-continue"); r.code != 3 || !strings.Contains(r.stderr, "--no-continue") {
		t.Fatalf("resume --no-continue on a live owner must not be ignored: %s", r)
	}
	began := time.Now()
	w.mustRun("prompt", id, "--linger", "1s", "again")
	w.waitOwnerGone(id, 20*time.Second)
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("the owner lingered %s after a prompt with --linger 1s", took)
	}
	if n := len(agentStarts(w.events(id))); n != 1 {
		t.Fatalf("%d agent starts, want 1: the prompt was queued for the warm owner", n)
	}
}

func TestQueued_LingerForAForegroundOwnerIsRefusedWithOneLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("--linger", "0")
	if r.code != 0 {
		t.Fatal(r)
	}
	// --linger 0: the subject is an owner in a command's foreground.
	owner, _ := w.background("prompt", "--linger", "0", id, "/sleep 5000")
	defer owner.Wait()
	waitFor(t, 20*time.Second, "the foreground owner's turn", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	r = w.run("prompt", id, "--linger", "60s", "later")
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 3 || len(lines) != 1 || !strings.Contains(r.stderr, "without --linger") {
		t.Fatalf("--linger queued for a foreground owner: %s", r)
	}
	if n := w.mustRunStatusPending(id); n != 0 {
		t.Fatalf("the refused prompt was queued: %d pending", n)
	}
}

// mustRunStatusPending is the status's pending_inputs.
func (w *world) mustRunStatusPending(id string) int {
	w.t.Helper()
	var got struct {
		Status struct {
			PendingInputs int `json:"pending_inputs"`
		} `json:"status"`
	}
	decodeJSON(w.t, w.mustRun("status", id, "--json").stdout, &got)
	return got.Status.PendingInputs
}

func TestApprove_TwoAnswersAtOnceApproveOneRequestAndTheSpareIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "defer")
	// B is asked 1.5 s after A is answered: both answers are sent before it.
	if r := w.run("--permissions", "defer", "prompt", id, "/write A.txt a\n/sleep 1500\n/write B.txt b"); r.code != 7 {
		t.Fatalf("the first write parks: %s", r)
	}
	first := w.parked(id)
	if len(first) != 1 {
		t.Fatalf("parked: %+v", first)
	}
	var wg sync.WaitGroup
	codes := make([]result, 2)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = w.run("approve", id) }()
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, r := range codes {
		switch r.code {
		case 0:
			ok++
		case 4:
			refused++
		default:
			t.Errorf("approve: %s", r)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("two approves of one request: %d succeeded, %d refused\n%s\n%s", ok, refused, codes[0], codes[1])
	}
	// B is asked next and waits: nobody has seen it, so nobody approved it.
	waitFor(t, 20*time.Second, "the second request", func() bool {
		p := w.parked(id)
		return len(p) == 1 && p[0].ID != first[0].ID
	})
	if _, err := os.Stat(filepath.Join(w.cwd, "B.txt")); err == nil {
		t.Fatal("B was written although no answer named its request")
	}
	if b, _ := os.ReadFile(filepath.Join(w.cwd, "A.txt")); string(b) != "a" {
		t.Fatalf("A: %q", b)
	}
	if r := w.run("approve", id, "--request", first[0].ID); r.code != 4 {
		t.Fatalf("an answer for a request already answered: %s", r)
	}
	second := w.parked(id)
	w.mustRun("deny", id)
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	if _, err := os.Stat(filepath.Join(w.cwd, "B.txt")); err == nil {
		t.Fatal("a denied write happened")
	}
	res := w.resolutions(id)
	if len(res) != 2 || res[0]["request_id"] != first[0].ID || res[0]["allowed"] != true || res[1]["request_id"] != second[0].ID || res[1]["allowed"] != false {
		t.Fatalf("resolutions: %+v", res)
	}
	for _, e := range ofType(w.events(id), eventlog.EventPermissionRequest) {
		if e.RequestID == "" {
			t.Fatalf("a parked request without request_id: %+v", e)
		}
	}
	if r := w.run("approve", id); r.code != 4 {
		t.Fatalf("approve with nothing parked: %s", r)
	}
}

func TestApprove_AnAnswerAfterTheDeferTimeoutIsRefusedAndAppliesToNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[permissions]\ndefer_timeout_seconds = 1\n")
	id := w.startWarm("60s", "--permissions", "defer")
	if r := w.run("--permissions", "defer", "prompt", id, "/write A.txt a\n/sleep 1500\n/write B.txt b"); r.code != 7 {
		t.Fatalf("parked: %s", r)
	}
	first := w.parked(id)
	// A times out; B is then asked: the late answer for A must not approve
	// it. B is seen in the log: it is parked for one second only, which a
	// poll of kandev status missed on a loaded machine.
	waitFor(t, time.Minute, "the second request", func() bool {
		return len(ofType(w.eventsSoFar(id), eventlog.EventPermissionRequest)) == 2
	})
	if r := w.run("approve", id, "--request", first[0].ID); r.code != 4 {
		t.Fatalf("a late answer for a timed-out request: %s", r)
	}
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	for _, f := range []string{"A.txt", "B.txt"} {
		if _, err := os.Stat(filepath.Join(w.cwd, f)); err == nil {
			t.Fatalf("%s was written though nobody approved it in time", f)
		}
	}
	for _, r := range w.resolutions(id) {
		if r["answered_by"] != "timeout" {
			t.Fatalf("a request was answered by something other than the timeout: %+v", r)
		}
	}
}

func TestLinger_AWarmOwnerWhoseAgentDiedExitsAndTheNextPromptRestores(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember KIWI")
	waitFor(t, 20*time.Second, "the warm owner", func() bool { return w.session(id).WarmUntil != nil })
	pid := w.session(id).AgentPID
	if pid == 0 {
		t.Fatal("no agent pid recorded")
	}
	_ = kill(-pid, syscall.SIGKILL)
	w.waitOwnerGone(id, 10*time.Second)
	var st struct {
		Status struct{ Reason string } `json:"status"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	if st.Status.Reason == verdict.ReasonAgentRunning {
		t.Fatalf("status after the agent died: %+v", st.Status)
	}
	w.recalls(id, "KIWI", 2, "start, then the restore")
}

func TestQueued_AnAskPromptToADetachedOwnerSaysItsRequestWasDeniedUnasked(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "approve-all")
	r := w.run("--permissions", "ask", "prompt", id, "/write asked.txt X")
	if r.code != 0 || !strings.Contains(r.stderr, "needs a terminal on stdin") || !strings.Contains(r.stderr, "--permissions defer") {
		t.Fatalf("an ask prompt served by a detached owner: %s", r)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "asked.txt")); err == nil {
		t.Fatal("the write of an ask prompt nobody was asked about happened")
	}
	if res := w.resolutions(id); len(res) != 1 || res[0]["unasked"] != true || res[0]["mode"] != "ask" {
		t.Fatalf("resolution: %+v", res)
	}
}

func TestApprove_AnAnswerRacingTheDeferTimeoutNeverApprovesTheNextRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[permissions]\ndefer_timeout_seconds = 1\n")
	id := w.startWarm("60s", "--permissions", "defer")
	for round := 0; round < 8; round++ {
		if r := w.run("--permissions", "defer", "prompt", id, "/write A.txt a\n/write B.txt b"); r.code != 7 {
			t.Fatalf("round %d: parked: %s", round, r)
		}
		// Land the answer around A's timeout: B is asked the moment A is denied.
		time.Sleep(time.Duration(700+60*round) * time.Millisecond)
		w.run("approve", id)
		w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	}
	// Every approval was given by an answer that named that very request.
	named := map[string]string{} // answer input id -> the request it named
	b, _ := os.ReadFile(filepath.Join(w.home, "sessions", id+".inbox.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var in state.Input
		json.Unmarshal([]byte(line), &in)
		if in.Kind == state.InputApprove {
			named[in.ID] = in.RequestID
		}
	}
	approved := 0
	for _, r := range w.resolutions(id) {
		if r["allowed"] != true {
			continue
		}
		approved++
		by, _ := r["answered_by"].(string)
		if named[by] != r["request_id"] {
			t.Fatalf("request %v was approved by %q, an answer for %q", r["request_id"], by, named[by])
		}
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "B.txt")); err == nil {
		t.Fatal("B was written: an answer meant for A reached it")
	}
	t.Logf("%d of 8 approves landed before the timeout", approved)
}
