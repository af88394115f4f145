package e2e_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// TestFork_SIGTERMAfterTheChildExistsFinishesTheForkAndExits0: a fork is all
// or nothing for a signal; once the child is created it is kept and
// reported, so a CI job that retries on a non-zero exit never makes two.
func TestFork_SIGTERMAfterTheChildExistsFinishesTheForkAndExits0(t *testing.T) {
	t.Parallel()
	w := sentWorld(t)
	// An agent that forks natively but takes 3 s to start: the SIGTERM lands
	// while the fork waits for it, after the child's record was written.
	w.config(`
[agents.slowfork]
command = ["` + kandevBin + `", "demo-agent", "--start-delay", "3000"]
`)
	parent, r := w.start("--agent", "slowfork", "--linger", "0", "remember FIG")
	if r.code != 0 {
		t.Fatal(r)
	}
	b := w.launch(nil, "fork", parent)
	h, _ := state.OpenHome(w.home)
	waitFor(t, 30*time.Second, "the child session to exist", func() bool {
		all, _ := h.ListSessions()
		return len(all) == 2
	})
	time.Sleep(300 * time.Millisecond) // the fork now waits for the agent's initialize
	res := b.stop(t, syscall.SIGTERM)
	all, _ := h.ListSessions()
	if len(all) != 2 {
		t.Fatalf("%d sessions after the fork, want 2", len(all))
	}
	child := all[0].ID
	if child == parent {
		child = all[1].ID
	}
	if res.code != 0 || strings.TrimSpace(strings.SplitN(res.stdout, "\n", 2)[0]) != child {
		t.Fatalf("want exit 0 and the child's id first: %s", res)
	}
	if !strings.Contains(res.stderr, "SIGTERM arrived after session "+child+" was created") || !strings.Contains(res.stdout, "stopped by SIGTERM") {
		t.Fatalf("the signal and the fallback are not said:\n%s", res)
	}
	if got := w.mustRun("prompt", child, "--linger", "0", "recall").stdout; !strings.Contains(got, "FIG") {
		t.Fatalf("the child does not hold the parent's conversation: %q", got)
	}
}
