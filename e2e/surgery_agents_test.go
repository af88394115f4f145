package e2e_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// forkAnswer is what `kandev --json fork` prints.
type forkAnswer struct {
	Session state.Session `json:"session"`
	Fork    struct {
		Method   string `json:"method"`
		Fallback string `json:"fallback_reason"`
	} `json:"fork"`
}

// fork runs kandev --json fork and logs how long it took.
func (w *world) fork(args ...string) forkAnswer {
	w.t.Helper()
	var out forkAnswer
	began := time.Now()
	decodeJSON(w.t, w.mustRun(append([]string{"--json", "fork"}, args...)...).stdout, &out)
	w.t.Logf("fork (%s) took %v", out.Fork.Method, time.Since(began).Round(time.Millisecond))
	return out
}

// codex-acp 2.x advertises session/fork (0.16 did not, and kandev replayed the
// parent's conversation into a fresh session): the child is a Codex session
// of its own, restored natively in a new process with the parent's turns.
func TestCodex_ForkIsNativeAndTheChildKeepsTheParentsConversation(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	r.underCI() // the test checks that no agent is left when each command exits
	first, second := "remember the word PAPAYA for later", "remember the word MANGO too"
	parent, res := r.start("--agent", "codex", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.mustRun("prompt", parent, second)
	token := r.session(parent).ResumeToken
	f := r.fork(parent)
	if f.Fork.Method != "native" || f.Fork.Fallback != "" {
		t.Fatalf("codex-acp advertises session/fork; want a native fork: %+v", f.Fork)
	}
	child := f.Session.ID
	ct := r.session(child).ResumeToken
	if ct == "" || ct == token {
		t.Fatalf("the child's Codex session %q, want a new one (parent %q)", ct, token)
	}
	third := "which words did I ask you to remember"
	r.mustRun("prompt", child, third)
	r.assertNoAgentSurvives("the child's prompt exited")

	reqs := r.requests()
	q := reqs[len(reqs)-1]
	if q.SessionID != ct {
		t.Fatalf("the child's request went to codex session %q, want the fork's %q (the parent's is %q)", q.SessionID, ct, token)
	}
	if got := q.userTexts(); len(got) != 3 || got[0] != first || got[1] != second || got[2] != third {
		t.Fatalf("user messages the model saw for the child's prompt: %q (want the parent's two, then the child's, no resume context)", got)
	}
	if starts := codexAgentStarts(r.events(child)); len(starts) != 1 || starts[0].Restore == "new" || starts[0].FallbackReason != "" {
		t.Fatalf("child agent_started: %+v", starts)
	}
	// The parent goes on in its own codex session, without the child's turn.
	r.mustRun("prompt", parent, "and now")
	reqs = r.requests()
	if q := reqs[len(reqs)-1]; q.SessionID != token || strings.Contains(q.input(), third) {
		t.Fatalf("the parent's next request: session %q (want %q), or it saw the child's turn", q.SessionID, token)
	}
}

func TestCodex_RewindSendsOnlyTheHistoryUpToTheCut(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	r.underCI() // the test checks that no agent is left when each command exits
	words := []string{"remember the word PAPAYA", "remember the word MANGO", "remember the word DURIAN"}
	id, res := r.start("--agent", "codex", words[0])
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.mustRun("prompt", id, words[1])
	r.mustRun("prompt", id, words[2])
	token := r.session(id).ResumeToken
	r.mustRun("rewind", id, "--to", strconv.FormatInt(r.turnEnd(id, "t2"), 10))
	ask := "which words did I ask you to remember"
	r.mustRun("prompt", id, ask)
	r.assertNoAgentSurvives("the prompt after the rewind exited")

	reqs := r.requests()
	q := reqs[len(reqs)-1]
	if q.SessionID == token {
		t.Fatalf("after a rewind the request went to the old codex session %q", token)
	}
	got := q.userTexts()
	if len(got) != 1 || !strings.Contains(got[0], "RESUME CONTEXT") || !strings.Contains(got[0], ask) {
		t.Fatalf("the first request after the rewind should carry the resume context and the prompt: %q", got)
	}
	if !strings.Contains(got[0], words[0]) || !strings.Contains(got[0], words[1]) || strings.Contains(q.input(), "DURIAN") {
		t.Fatalf("the model should see PAPAYA and MANGO and not DURIAN:\n%s", q.input())
	}
	evs := r.events(id)
	if starts := codexAgentStarts(evs); starts[len(starts)-1].Restore != "new" {
		t.Fatalf("the agent after the rewind: %+v", starts[len(starts)-1])
	}
	assertNoSeqGap(t, evs)
}

func TestOpenCode_ForkAtTheEndIsNativeAndTheChildsModelSeesTheParentsTurns(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	r.underCI() // the test checks that no agent is left when each command exits
	first := "remember the word PAPAYA for later"
	parent, res := r.start("--agent", "opencode", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	firstAnswer := agentText(r.events(parent), lastTurn(r.events(parent)))
	token := r.session(parent).ResumeToken
	f := r.fork(parent)
	if f.Fork.Method != "native" || f.Fork.Fallback != "" {
		t.Fatalf("OpenCode advertises session/fork; want a native fork: %+v", f.Fork)
	}
	child := f.Session.ID
	if ct := r.session(child).ResumeToken; !strings.HasPrefix(ct, "ses_") || ct == token {
		t.Fatalf("the child's OpenCode session %q, want a new one (parent %q)", ct, token)
	}
	r.assertNoAgentSurvives(child, "fork exited")
	second := "which word did I ask you to remember"
	r.mustRun("prompt", child, second)
	r.assertNoAgentSurvives(child, "the child's prompt exited")

	starts := ofType(r.events(child), eventlog.EventAgentStarted)
	if len(starts) != 1 || starts[0].Restore == "new" || starts[0].FallbackReason != "" {
		t.Fatalf("the child's agent should restore its forked session: %+v", starts)
	}
	turns := r.fake.turns()
	q := turns[len(turns)-1]
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the child's prompt: %q (want the parent's, then the child's, no resume context)", got)
	}
	if !strings.Contains(q.input(), firstAnswer) {
		t.Fatalf("the parent's answer %q is missing from the child's request:\n%s", firstAnswer, q.input())
	}
}

// Claude's adapter answers session/fork with a new session id and keeps the
// fork on disk (0.23.1 kept it only in the adapter that made it, so a new
// process fell back to a fresh session): a new process resumes the child
// natively, and the model is shown the parent's turn, then the child's.
func TestClaude_NativeForkIsResumedByANewAdapterWithTheParentsConversation(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	r.underCI() // the test checks that no agent is left when each command exits
	first := "remember the word PAPAYA for later"
	parent, res := r.start("--agent", "claude", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	token := r.session(parent).ResumeToken
	f := r.fork(parent)
	if f.Fork.Method != "native" || f.Fork.Fallback != "" {
		t.Fatalf("Claude's adapter advertises session/fork; want a native fork: %+v", f.Fork)
	}
	child := f.Session.ID
	ct := r.session(child).ResumeToken
	if ct == "" || ct == token {
		t.Fatalf("the child's Claude session %q, want a new one (parent %q)", ct, token)
	}
	second := "which word did I ask you to remember"
	r.mustRun("prompt", child, second)
	r.assertNoAgentSurvives("the child's prompt exited")

	starts := codexAgentStarts(r.events(child))
	if len(starts) != 1 || starts[0].Restore == "new" || starts[0].FallbackReason != "" {
		t.Fatalf("the child's agent should restore its forked Claude session: %+v", starts)
	}
	reqs := r.requests()
	q := reqs[len(reqs)-1]
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the child's prompt: %q (want the parent's, then the child's, no resume context)", got)
	}
	if s := r.session(child); s.PendingContext || s.ResumeToken != ct {
		t.Fatalf("after the child's turn: pending %v, token %q (want the fork's %q)", s.PendingContext, s.ResumeToken, ct)
	}
}
