package e2e_test

// Claude and OpenCode behind kandev acp, across editor restarts: the session
// made in one editor process is loaded in a new one, the agent is restored
// natively, and its model is shown the first turn with the second prompt.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

func TestEditor_ClaudeBehindKandevACPIsLoadedInANewProcessWithItsContext(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	first := "remember the word PAPAYA for later"
	ed := r.openEditor("--agent", "claude")
	ed.initialize()
	id := ed.newSession(r.cwd)
	ed.mustPrompt(id, first)
	streamed := chunkText(ed.take(id), "agent")
	if streamed != "ack 1: "+first {
		t.Fatalf("the editor was shown %q", streamed)
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
	r.assertNoAgentSurvives("the first kandev acp exited")
	token := r.session(string(id)).ResumeToken
	if token == "" {
		t.Fatal("no Claude session id recorded after the first turn")
	}

	ed2 := r.openEditor("--agent", "claude")
	ed2.initialize()
	began := time.Now()
	ed2.load(id, r.cwd)
	ups := ed2.take(id)
	t.Logf("claude behind kandev acp: load replayed %d updates and restored Claude in %s", len(ups), time.Since(began))
	if chunkText(ups, "user") != first || chunkText(ups, "agent") != streamed {
		t.Fatalf("replay: user %q, agent %q", chunkText(ups, "user"), chunkText(ups, "agent"))
	}
	second := "which word did I ask you to remember"
	ed2.mustPrompt(id, second)
	if got := chunkText(ed2.take(id), "agent"); got != "ack 2: "+second {
		t.Fatalf("second turn shown as %q", got)
	}
	if code := ed2.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed2.stderr)
	}
	r.assertNoAgentSurvives("the second kandev acp exited")

	assertRestoredNatively(t, r.events(string(id)))
	if s := r.session(string(id)); s.ResumeToken != token {
		t.Fatalf("Claude session id %q after the second turn, was %q", s.ResumeToken, token)
	}
	// The model saw the first turn when it answered the second.
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if got := reqs[1].userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(reqs[1].input(), streamed) {
		t.Fatalf("the first answer is missing from the second request:\n%s", reqs[1].input())
	}
}

func TestEditor_OpenCodeBehindKandevACPIsLoadedInANewProcessWithItsContext(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	first := "remember the word PAPAYA for later"
	ed := r.openEditor("--agent", "opencode")
	ed.initialize()
	id := ed.newSession(r.cwd)
	ed.mustPrompt(id, first)
	streamed := chunkText(ed.take(id), "agent")
	if !strings.HasPrefix(streamed, "ack ") || !strings.HasSuffix(streamed, ": "+first) {
		t.Fatalf("the editor was shown %q", streamed)
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
	r.assertNoAgentSurvives(string(id), "the first kandev acp exited")
	token := r.session(string(id)).ResumeToken
	if !strings.HasPrefix(token, "ses_") {
		t.Fatalf("resume token after the first turn: %q, want an OpenCode session id", token)
	}

	ed2 := r.openEditor("--agent", "opencode")
	ed2.initialize()
	began := time.Now()
	ed2.load(id, r.cwd)
	ups := ed2.take(id)
	t.Logf("opencode behind kandev acp: load replayed %d updates and restored OpenCode in %s", len(ups), time.Since(began))
	if chunkText(ups, "user") != first || chunkText(ups, "agent") != streamed {
		t.Fatalf("replay: user %q, agent %q", chunkText(ups, "user"), chunkText(ups, "agent"))
	}
	second := "which word did I ask you to remember"
	ed2.mustPrompt(id, second)
	shown := chunkText(ed2.take(id), "agent")
	if code := ed2.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed2.stderr)
	}
	r.assertNoAgentSurvives(string(id), "the second kandev acp exited")

	assertRestoredNatively(t, r.events(string(id)))
	if s := r.session(string(id)); s.ResumeToken != token {
		t.Fatalf("OpenCode session id %q after the second turn, was %q", s.ResumeToken, token)
	}
	// The model saw the first turn when it answered the second.
	turns := r.fake.turns()
	if len(turns) != 2 {
		t.Fatalf("the model got %d turn requests, want 2", len(turns))
	}
	q := turns[1]
	if shown != fmt.Sprintf("ack %d: %s", q.N, second) {
		t.Fatalf("second turn shown as %q (request %d)", shown, q.N)
	}
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(q.input(), streamed) {
		t.Fatalf("the first answer %q is missing from the second request:\n%s", streamed, q.input())
	}
}

// assertRestoredNatively holds when the session's agent was started twice:
// new for the first editor, then resumed by the agent itself for the second.
func assertRestoredNatively(t *testing.T, evs []eventlog.Event) {
	t.Helper()
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %s", mustJSON(starts))
	}
}
