package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSwitch_RealAgentsCarryTheConversationFromClaudeToCodexToGemini
// switches one session between the real agents of the npm suites, each
// behind its own fake model: the word said to Claude reaches Codex's model
// in the resume context of its first request, and Gemini's after a second
// switch (with its prompt given to switch), and no prompt is sent twice.
func TestSwitch_RealAgentsCarryTheConversationFromClaudeToCodexToGemini(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Each rig writes its own agent's config: the world gets all three.
	// Each sets the same [agent] handshake bound, once here.
	const handshake = "[agent]\nhandshake_timeout_seconds = 180\n\n"
	var cfg strings.Builder
	cfg.WriteString(handshake)
	keep := func() {
		b, err := os.ReadFile(filepath.Join(w.home, "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.WriteString(strings.ReplaceAll(string(b), handshake, ""))
		cfg.WriteString("\n")
	}
	claude := newClaudeRigIn(t, w)
	keep()
	codex := newCodexRig(t, codexOptions{world: w})
	keep()
	gemini := newGeminiRigIn(t, w, geminiInstall(t))
	keep()
	w.config(cfg.String())

	id, r := w.start("--agent", "claude", "remember the word ZEBRA")
	mustOK(t, r)
	if n := len(claude.Requests()); n != 1 {
		t.Fatalf("claude's model got %d agent-loop requests, want 1", n)
	}
	w.mustRun("switch", id, "--agent", "codex")
	w.mustRun("prompt", id, "which word did I ask you to remember?")
	reqs := codex.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].Input, "ZEBRA") || strings.Count(reqs[0].Input, "RESUME CONTEXT FOR CONTINUING TASK") != 1 {
		t.Fatalf("codex's first model request must carry the word in one resume context:\n%s", trimTo(mustJSON(reqs), 4000))
	}

	w.mustRun("switch", id, "--agent", geminiAgent, "say that word again")
	greqs := gemini.Requests()
	if len(greqs) == 0 || !strings.Contains(greqs[0].Input, "ZEBRA") || !strings.Contains(greqs[0].Input, "which word did I ask you to remember?") {
		t.Fatalf("gemini's first model request must carry the conversation so far:\n%s", trimTo(mustJSON(greqs), 4000))
	}
	if n := len(claude.Requests()); n != 1 {
		t.Fatalf("claude's model got %d requests after the switch away from it", n)
	}
	evs := w.events(id)
	if sw := switchesIn(evs); len(sw) != 2 || sw[0].From != "claude" || sw[0].To != "codex" || sw[1].From != "codex" || sw[1].To != geminiAgent {
		t.Fatalf("agent_switched events: %+v", sw)
	}
	assertSentOnce(t, evs)
	assertNoSeqGap(t, evs)
}
