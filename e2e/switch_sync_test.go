//go:build unix

package e2e_test

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// TestSwitch_ATravellingSessionIsClaimedFirst: while machine A runs a turn
// (holding the session's claim), B's switch is refused naming A; once A is
// done, B's switch claims the session, brings A's turn, and pushes the
// switch with it, so A's next prompt runs the new agent, which recalls both.
func TestSwitch_ATravellingSessionIsClaimedFirst(t *testing.T) {
	t.Parallel()
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	r.config(`
[agents.plain]
command = ["` + kandevBin + `", "demo-agent", "--no-resume", "--no-load"]
`)
	id := r.shared()
	busy, _ := a.background("prompt", id, "remember pear\n/sleep 4000")
	waitForRunningTurn(t, a, id)
	if res := b.run("switch", id, "--agent", "plain"); res.code != 3 || !strings.Contains(res.stderr, "machine A") {
		t.Fatalf("a switch while another machine holds the claim: want exit 3 naming A:\n%s", res)
	}
	if err := busy.Wait(); err != nil {
		t.Fatalf("A's turn: %v", err)
	}
	b.mustRun("switch", id, "--agent", "plain")
	if evs := b.events(id); len(ofType(evs, eventlog.EventTurnStarted)) != 2 || len(switchesIn(evs)) != 1 {
		t.Fatal("B switched without A's turn, or did not record the switch")
	}
	out := a.mustRun("prompt", id, "recall").stdout
	if !strings.Contains(out, "apple") || !strings.Contains(out, "pear") {
		t.Fatalf("A's next turn after B's switch: %s", out)
	}
	if s := a.session(id); s.Agent != "plain" || len(switchesIn(a.events(id))) != 1 {
		t.Fatalf("A's copy runs %s", s.Agent)
	}
}
