package e2e_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// background starts kandev without waiting for it.
func (w *world) background(args ...string) (*exec.Cmd, *strings.Builder) {
	w.t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	return cmd, &out
}

// waitFor polls until cond holds (at most d).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *world) ownerAlive(id string) bool {
	h, _ := state.OpenHome(w.home)
	alive, _ := h.OwnerAlive(id)
	return alive
}

func TestPrompt_FiftyConcurrentPromptsOneOwnerEachPrintsItsOwnTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	const n = 50
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = w.run("prompt", id, fmt.Sprintf("/say reply-%02d", i))
		}(i)
	}
	wg.Wait()
	for i, r := range results {
		want := fmt.Sprintf("reply-%02d", i)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("prompt %d: %s", i, r)
		}
		for j := 0; j < n; j++ {
			if j != i && strings.Contains(r.stdout, fmt.Sprintf("reply-%02d", j)) {
				t.Fatalf("prompt %d printed another process's turn %d:\n%s", i, j, r.stdout)
			}
		}
	}
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	turns := ofType(evs, eventlog.EventTurnStarted)
	if len(turns) != n {
		t.Fatalf("%d turns, want %d", len(turns), n)
	}
	// Each turn answered its own input, and queued inputs were served in inbox order.
	h, _ := state.OpenHome(w.home)
	inbox, _ := h.ReadInbox(id, 0)
	var queuedOrder []string
	for _, in := range inbox {
		queuedOrder = append(queuedOrder, in.ID)
	}
	var servedOrder []string
	for _, tr := range turns {
		if tr.InputID != "" { // served an inbox input (its own prompt's owner records it as the user's)
			servedOrder = append(servedOrder, tr.InputID)
		}
		users := ofType(evs, eventlog.EventUserMessage)
		_ = users
	}
	if strings.Join(servedOrder, ",") != strings.Join(queuedOrder, ",") {
		t.Fatalf("served order %v differs from inbox order %v", servedOrder, queuedOrder)
	}
	for _, tr := range turns {
		var user, text string
		for _, e := range evs {
			if e.TurnID == tr.TurnID && e.Type == eventlog.EventUserMessage {
				user = e.Content
			}
		}
		text = agentText(evs, tr.TurnID)
		if strings.TrimPrefix(user, "/say ") != text {
			t.Fatalf("turn %s answered %q to %q", tr.TurnID, text, user)
		}
	}
}

func TestResume_FiftyHoldersRaceForTheLeaseExactlyOneWins(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	const n = 50
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i] = w.run("resume", id, "--holder", fmt.Sprintf("h%d", i), "--ttl", "8").code
		}(i)
	}
	wg.Wait()
	won, lost := 0, 0
	for _, c := range codes {
		switch c {
		case 0:
			won++
		case 3:
			lost++
		}
	}
	if won != 1 || lost != n-1 {
		t.Fatalf("%d won, %d got exit 3 (codes %v)", won, lost, codes)
	}
	// The loser is told who holds it and until when.
	r := w.run("resume", id, "--holder", "late")
	if r.code != 3 || !strings.Contains(r.stderr, "attached to h") {
		t.Fatalf("%s", r)
	}
	if r := w.run("prompt", id, "--holder", "late", "hi"); r.code != 3 {
		t.Fatalf("prompt from a non-holder: %s", r)
	}
	if r := w.run("prompt", id, "--holder", "late", "--force", "/say forced"); r.code != 0 {
		t.Fatalf("prompt --force: %s", r)
	}
	time.Sleep(8 * time.Second)
	if r := w.run("resume", id, "--holder", "late"); r.code != 0 {
		t.Fatalf("after expiry another holder wins: %s", r)
	}
	if r := w.run("detach", id, "--holder", "late"); r.code != 0 {
		t.Fatal(r)
	}
}

func TestResume_TTLBounds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	var out struct {
		Attach struct {
			AttachedAt      time.Time `json:"attached_at"`
			AttachExpiresAt time.Time `json:"attach_expires_at"`
		}
	}
	r := w.mustRun("--json", "resume", id, "--ttl", "0", "--holder", "a")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	decodeJSON(t, lines[len(lines)-1], &out)
	if d := out.Attach.AttachExpiresAt.Sub(out.Attach.AttachedAt); d != 900*time.Second {
		t.Fatalf("ttl 0 gave %v, want 900s", d)
	}
	if r := w.run("resume", id, "--ttl", "86401", "--holder", "a"); r.code != 2 {
		t.Fatalf("ttl 86401: %s", r)
	}
	if r := w.run("resume", id, "--ttl", "99999999999999999999999", "--holder", "a"); r.code != 2 {
		t.Fatalf("huge ttl: %s", r)
	}
}

func TestCancel_FromAnotherProcessStopsASleepingTurnQuickly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	cmd, _ := w.background("prompt", id, "/sleep 60000")
	waitFor(t, 20*time.Second, "the turn to start", func() bool {
		s := w.session(id)
		return s.State == state.StateRunning && w.ownerAlive(id)
	})
	began := time.Now()
	w.mustRun("cancel", id)
	cmd.Wait()
	took := time.Since(began)
	if took > 5*time.Second {
		t.Fatalf("cancel took %v", took)
	}
	if s := w.session(id); s.StopReason != "cancelled" {
		t.Fatalf("stop reason %q", s.StopReason)
	}
	t.Logf("cancel took %v", took)
}

func TestStop_FromAnotherProcessRecordsUserCanceled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	cmd, _ := w.background("prompt", id, "/sleep 60000")
	waitFor(t, 20*time.Second, "the turn to start", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	w.mustRun("stop", id)
	cmd.Wait()
	if s := w.session(id); s.StopReason != "user_canceled" || !s.Stopped {
		t.Fatalf("record %+v", s)
	}
	w.mustRun("resume", id)
	if continuations(w.events(id)) != 0 {
		t.Fatal("a stopped turn was continued")
	}
}

func TestInbox_OwnerKilledWithQueuedInputsTheNextOwnerServesThemInOrderOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	owner, _ := w.background("prompt", id, "/say working\n/sleep 60000")
	waitFor(t, 20*time.Second, "the owner's turn", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	for i := 0; i < 3; i++ {
		w.mustRun("prompt", id, "--no-follow", fmt.Sprintf("/say queued-%d", i))
	}
	w.killOwner(id, owner)
	r := w.mustRun("resume", id)
	_ = r
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	var order []string
	for _, tr := range ofType(evs, eventlog.EventTurnStarted) {
		order = append(order, tr.Source)
	}
	// The first turn is the prompt's: "user" when the owner it started ran
	// it (in the command or detached), "queued" when it joined a warm owner.
	if len(order) > 0 && order[0] == eventlog.SourceUser {
		order[0] = "queued"
	}
	want := "queued continuation queued queued queued"
	if strings.Join(order, " ") != want {
		t.Fatalf("turn sources %v, want %s", order, want)
	}
	text := agentText(evs, "")
	if strings.Index(text, "queued-0") > strings.Index(text, "queued-1") || strings.Index(text, "queued-1") > strings.Index(text, "queued-2") || strings.Count(text, "queued-1") != 1 {
		t.Fatalf("queued inputs served out of order or twice: %q", text)
	}
	// A second resume serves nothing again.
	w.mustRun("resume", id)
	if got := len(ofType(w.events(id), eventlog.EventTurnStarted)); got != 5 {
		t.Fatalf("%d turns after a second resume", got)
	}
}

func TestInbox_QueuedPromptIsTakenOverWhenTheOwnerDies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	owner, _ := w.background("prompt", id, "/say working\n/sleep 60000")
	waitFor(t, 20*time.Second, "the owner's turn", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	follower, out := w.background("prompt", id, "/say from the follower")
	time.Sleep(500 * time.Millisecond)
	w.killOwner(id, owner)
	done := make(chan error, 1)
	go func() { done <- follower.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("follower: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		follower.Process.Kill()
		t.Fatal("the follower was stranded after its owner died")
	}
	if !strings.Contains(out.String(), "from the follower") {
		t.Fatalf("follower printed %q", out.String())
	}
}

func TestEvents_FollowPrintsEveryEventOnceAndEndsWithTheOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The follow ends with the owner: the prompt's own detached owner, which
	// lingers 1 s after its turn (a warm one would stay for the default 300 s).
	id, _ := w.start("--linger", "0")
	owner, _ := w.background("prompt", "--linger", "1s", id, "/say streaming for the follower\n/sleep 1500\n/say the end")
	waitFor(t, 20*time.Second, "the owner", func() bool { return w.ownerAlive(id) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, "--json", "events", id, "--follow", "--since", "0")
	cmd.Dir, cmd.Env = w.cwd, w.env
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("events --follow: %v", err)
	}
	owner.Wait()
	lines := strings.Split(strings.TrimSpace(string(outb)), "\n")
	evs := w.events(id)
	seen := map[int64]int{}
	for _, l := range lines[:len(lines)-1] {
		var e eventlog.Event
		decodeJSON(t, l, &e)
		seen[e.Seq]++
	}
	for _, e := range evs {
		if seen[e.Seq] != 1 {
			t.Fatalf("event %d printed %d times", e.Seq, seen[e.Seq])
		}
	}
	if len(seen) != len(evs) {
		t.Fatalf("printed %d events, log has %d", len(seen), len(evs))
	}
	// --since resumes without gaps or duplicates.
	mid := evs[len(evs)/2].Seq
	outb, _ = exec.Command(kandevBin, "--home", w.home, "--json", "events", id, "--follow", "--since", fmt.Sprint(mid)).Output()
	lines = strings.Split(strings.TrimSpace(string(outb)), "\n")
	var first eventlog.Event
	decodeJSON(t, lines[0], &first)
	if first.Seq != mid+1 || len(lines)-1 != len(evs)-int(mid) {
		t.Fatalf("--since %d started at %d with %d events", mid, first.Seq, len(lines)-1)
	}
}
