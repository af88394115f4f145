package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/proc"
)

// waitNoTagged waits until no process tagged with any of ids is left in
// the world's home, and fails naming the survivors otherwise.
func (w *world) waitNoTagged(within time.Duration, ids ...string) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []proc.Proc
		for id, procs := range proc.TaggedProcesses(w.home) {
			if len(ids) == 0 || slices.Contains(ids, id) {
				left = append(left, procs...)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("processes outlived their time (%s): %+v", within, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// warmUntil is the status's warm_until ("" when nothing is warm).
func (w *world) warmUntil(id string) string {
	w.t.Helper()
	var got struct {
		Status struct {
			WarmUntil string `json:"warm_until"`
		} `json:"status"`
	}
	r := w.mustRun("--json", "status", id)
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		w.t.Fatalf("status --json: %v\n%s", err, r)
	}
	return got.Status.WarmUntil
}

// waitWarm waits until the session's owner is warm and idle.
func (w *world) waitWarm(id string) time.Time {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if u := w.warmUntil(id); u != "" {
			t, err := time.Parse(time.RFC3339, u)
			if err != nil {
				w.t.Fatalf("warm_until %q: %v", u, err)
			}
			return t
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("session %s never turned warm", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWarm_ByDefaultForAPersonForFiveMinutes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("remember FIG")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	until := w.waitWarm(id)
	if left := time.Until(until); left < 280*time.Second || left > 301*time.Second {
		t.Fatalf("warm for %s after a start with nothing configured, want about 300 s", left)
	}
	if r := w.mustRun("list"); !strings.Contains(r.stdout, "warm until") {
		t.Fatalf("list does not say what is warm:\n%s", r)
	}
	r = w.mustRun("prompt", id, "recall")
	if !strings.Contains(r.stdout, "FIG") || len(agentStarts(w.events(id))) != 1 {
		t.Fatalf("the second prompt was not served by the warm agent:\n%s", r)
	}
	waitTagged(t, w, id, "demo-agent") // the count below sees the warm agent
	w.mustRun("close", "--all")
	if w.ownerAlive(id) {
		t.Fatal("close --all returned with the owner alive")
	}
	w.waitNoTagged(0, id) // close --all returns once the agent is gone
}

func TestWarm_UnderCINothingLingersAtAll(t *testing.T) {
	t.Parallel()
	for _, ci := range []string{"true", "1"} {
		t.Run("CI="+ci, func(t *testing.T) {
			w := newWorld(t)
			w.env = append(w.env, "CI="+ci)
			id, r := w.start("/say one")
			if r.code != 0 {
				t.Fatal(r)
			}
			t.Cleanup(func() { killSurvivors(w.home, id) })
			if w.ownerAlive(id) {
				t.Fatal("the owner of start lingers under CI")
			}
			w.waitNoTagged(3*time.Second, id)
			w.mustRun("prompt", id, "/say two")
			if w.ownerAlive(id) || w.warmUntil(id) != "" {
				t.Fatal("an owner lingers under CI")
			}
			// The agent's shutdown runs after the command returned: it is over at once.
			w.waitNoTagged(3*time.Second, id)
		})
	}
}

func TestWarm_PoolClosesTheLeastRecentlyUsedIdleOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[session]\nmax_warm = 2\n")
	var ids []string
	for i := range 3 {
		ids = append(ids, w.startWarm("60s", fmt.Sprintf("/say s%d", i)))
		w.waitWarm(ids[i])
	}
	w.waitOwnerGone(ids[0], 10*time.Second)
	w.waitNoTagged(5*time.Second, ids[0])
	if !w.ownerAlive(ids[1]) || !w.ownerAlive(ids[2]) {
		t.Fatal("the pool closed a more recently used owner")
	}
	// Using s1 makes s2 the least recently used: the next one closes s2.
	w.mustRun("prompt", ids[1], "/say again")
	ids = append(ids, w.startWarm("60s", "/say s3"))
	w.waitWarm(ids[3])
	w.waitOwnerGone(ids[2], 10*time.Second)
	w.waitNoTagged(5*time.Second, ids[2])
	if !w.ownerAlive(ids[1]) || !w.ownerAlive(ids[3]) {
		t.Fatal("the pool closed the wrong owner")
	}
	if n := len(agentStarts(w.events(ids[0]))); n != 1 {
		t.Fatalf("%d agent starts in the closed session, want 1", n)
	}
	// A closed session is resumable as usual: the next prompt restores it.
	r := w.mustRun("prompt", ids[0], "--linger", "0", "/say back")
	if !strings.Contains(r.stdout, "back") {
		t.Fatalf("the evicted session did not take a prompt:\n%s", r)
	}
	r = w.mustRun("--json", "close", "--all")
	var closed struct{ Closed []string }
	if err := json.Unmarshal([]byte(r.stdout), &closed); err != nil || len(closed.Closed) != 2 {
		t.Fatalf("close --all closed %v, want the 2 warm owners\n%s", closed.Closed, r)
	}
	for _, id := range ids {
		if w.ownerAlive(id) {
			t.Fatalf("%s still has an owner after close --all", id)
		}
	}
	w.waitNoTagged(0)
	if r := w.mustRun("close", "--all"); !strings.Contains(r.stdout, "nothing to close") {
		t.Fatalf("close --all with nothing warm:\n%s", r)
	}
	if r := w.run("close", "--all", ids[0]); r.code != 2 {
		t.Fatalf("close --all with a session: want exit 2\n%s", r)
	}
}

func TestWarm_KilledWarmOwnerLeavesNoProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "/say hi")
	w.waitWarm(id)
	waitTagged(t, w, id, "demo-agent") // the count below sees the warm agent
	if err := kill(w.session(id).OwnerPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.waitOwnerGone(id, 5*time.Second)
	w.waitNoTagged(3*time.Second, id)
}

// An agent that ignores its stdin closing (as Claude's and codex's adapters
// do) is still stopped once the command that ran its turn has returned:
// signalled at once with exit_on_eof = false, after the grace without.
func TestWarm_AnAgentThatIgnoresEOFIsStoppedAfterTheCommandReturns(t *testing.T) {
	t.Parallel()
	for _, eof := range []string{"false", "true"} {
		t.Run("exit_on_eof="+eof, func(t *testing.T) {
			w := newWorld(t)
			// The subject is an owner that ends with its command (no linger):
			// its agent's shutdown runs after the command returned.
			w.underCI()
			w.config(fmt.Sprintf("[agents.deaf]\ncommand = [%q, \"demo-agent\", \"--ignore-eof\"]\nexit_on_eof = %s\n", kandevBin, eof))
			id, r := w.start("--agent", "deaf", "/say one")
			if r.code != 0 {
				t.Fatal(r)
			}
			t.Cleanup(func() { killSurvivors(w.home, id) })
			if w.ownerAlive(id) {
				t.Fatal("the command returned with its owner alive")
			}
			w.waitNoTagged(4*time.Second, id)
			// The next prompt restores it as usual.
			if r := w.mustRun("prompt", id, "/say two"); !strings.Contains(r.stdout, "two") {
				t.Fatal(r)
			}
			w.waitNoTagged(4*time.Second, id)
			if _, err := os.Stat(w.home + "/sessions/" + id + ".agent.lock"); err != nil {
				t.Fatalf("no agent lock: %v", err)
			}
		})
	}
}

func TestWarm_OwnersRacingIntoThePoolNeverExceedIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[session]\nmax_warm = 2\n")
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, r := w.start("--linger", "60s", fmt.Sprintf("/say racer %d", i))
			if r.code != 0 {
				t.Error(r)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		w.run("close", "--all")
		for _, id := range ids {
			killSurvivors(w.home, id)
		}
	})
	live := func() (out []string) {
		for _, id := range ids {
			if w.ownerAlive(id) {
				out = append(out, id)
			}
		}
		return out
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(live()) > 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d owners linger with max_warm = 2: %v", len(live()), live())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if l := live(); len(l) > 2 || len(l) == 0 {
		t.Fatalf("%d owners linger with max_warm = 2: %v", len(l), l)
	}
	r := w.mustRun("--json", "close", "--all")
	var closed struct{ Closed []string }
	if err := json.Unmarshal([]byte(r.stdout), &closed); err != nil || len(closed.Closed) > 2 {
		t.Fatalf("close --all closed %v\n%s", closed.Closed, r)
	}
	w.waitNoTagged(0)
}
