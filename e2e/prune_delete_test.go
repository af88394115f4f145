package e2e_test

// kandev prune asks an agent that offers session/delete to delete its own
// copy of each pruned session, and leaves an agent that does not alone.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func (w *world) demoDeleted() []string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "demo-agent", "deleted-sessions.log"))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func TestPrune_AsksAnAgentThatOffersSessionDeleteToDeleteItsCopy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config("[agents.nodelete]\ncommand = [\"{kandev}\", \"demo-agent\", \"--no-delete\"]\n")
	a, _ := w.start("remember APPLE")
	b, _ := w.start("remember PEAR")
	c, _ := w.start("--agent", "nodelete", "remember FIG")
	kept, _ := w.start("remember PLUM")
	for _, id := range []string{a, b, c} {
		w.mustRun("done", id)
	}
	tokA, tokB, tokC, tokKept := w.session(a).ResumeToken, w.session(b).ResumeToken, w.session(c).ResumeToken, w.session(kept).ResumeToken

	var dry struct {
		AgentSessionsDeleted []string `json:"agent_sessions_deleted"`
	}
	decodeJSON(t, w.mustRun("--json", "prune", "--dry-run").stdout, &dry)
	slices.Sort(dry.AgentSessionsDeleted)
	if want := dailySorted(a, b); !slices.Equal(dry.AgentSessionsDeleted, want) {
		t.Fatalf("prune --dry-run would delete the agent's copies of %v, want %v", dry.AgentSessionsDeleted, want)
	}
	if got := w.demoDeleted(); len(got) != 0 {
		t.Fatalf("a dry run deleted %v", got)
	}

	start := time.Now()
	r := w.mustRun("prune")
	took := time.Since(start)
	got := w.demoDeleted()
	slices.Sort(got)
	if want := dailySorted(tokA, tokB); !slices.Equal(got, want) {
		t.Fatalf("the agent deleted %v, want the tokens of the two pruned sessions %v: %s", got, want, r)
	}
	if !strings.Contains(r.stdout, "and demo deleted its copy (session/delete)") || r.stderr != "" {
		t.Fatalf("prune does not say so, or warns: %s", r)
	}
	for _, tok := range []string{tokA, tokB, tokC} {
		if _, err := os.Stat(filepath.Join(w.home, "demo-agent", tok+".json")); err == nil {
			t.Errorf("the agent's file for %s is still there", tok)
		}
	}
	if slices.Contains(got, tokC) || slices.Contains(got, tokKept) {
		t.Fatalf("session/delete went to an agent that does not offer it, or for a kept session: %v", got)
	}
	if _, err := os.Stat(filepath.Join(w.home, "demo-agent", tokKept+".json")); err != nil {
		t.Fatalf("the kept session's agent file: %v", err)
	}
	t.Logf("prune of 3 sessions with one demo agent launch took %v", took)
}
