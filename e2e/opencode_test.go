package e2e_test

// The OpenCode suite: the real OpenCode (see opencode_rig_test.go) driven
// through the built kandev binary, offline.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestOpenCode_PromptInANewProcessResumesTheOpenCodeSessionWithItsContext(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	first := "remember the word PAPAYA for later"
	began := time.Now()
	id, res := r.start("--agent", "opencode", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	openCodeTimings(t, "start", began, time.Since(began), r.events(id))
	if !strings.Contains(res.stdout, ": "+first) || !strings.Contains(res.stdout, "ack ") {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	r.assertNoAgentSurvives(id, "start exited")
	token := r.session(id).ResumeToken
	if !strings.HasPrefix(token, "ses_") {
		t.Fatalf("resume token after the first turn: %q, want an OpenCode session id", token)
	}
	firstAnswer := agentText(r.events(id), lastTurn(r.events(id)))

	second := "which word did I ask you to remember"
	began = time.Now()
	res = r.run("prompt", id, second)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	openCodeTimings(t, "prompt in a new process", began, time.Since(began), r.events(id))
	r.assertNoAgentSurvives(id, "prompt exited")

	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	turns := r.fake.turns()
	if len(turns) != 2 {
		t.Fatalf("the model got %d turn requests, want 2", len(turns))
	}
	q := turns[1]
	if got := agentText(evs, lastTurn(evs)); got != fmt.Sprintf("ack %d: %s", q.N, second) {
		t.Fatalf("second turn's answer: %q (request %d)", got, q.N)
	}
	agentUsage(t, evs, r.session(id), reported{tokens: true})
	if s := r.session(id); s.ResumeToken != token || s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the second turn: token %q (was %q), state %s, stop %q", s.ResumeToken, token, s.State, s.StopReason)
	}
	// The model saw the first turn when it answered the second: OpenCode
	// restored the conversation, kandev did not inject it.
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(q.input(), firstAnswer) {
		t.Fatalf("the first answer %q is missing from the second request:\n%s", firstAnswer, q.input())
	}
}

func TestOpenCode_NeverPromptedSessionIsResumedNatively(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	id, res := r.start("--agent", "opencode")
	if res.code != 0 {
		t.Fatalf("start without a prompt: %s", res)
	}
	r.assertNoAgentSurvives(id, "the empty start exited")
	token := r.session(id).ResumeToken
	if token == "" || len(r.fake.turns()) != 0 {
		t.Fatalf("after an empty start: token %q, %d model requests", token, len(r.fake.turns()))
	}
	prompt := "hello after an empty start"
	if res := r.run("prompt", id, prompt); res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives(id, "prompt exited")
	evs := r.events(id)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	for _, m := range ofType(evs, eventlog.EventMarker) {
		if m.Severity == "warning" {
			t.Errorf("unexpected warning marker: %s", m.Content)
		}
	}
	if s := r.session(id); s.ResumeToken != token || s.StopReason != "end_turn" {
		t.Fatalf("record: token %q (was %q), stop %q", s.ResumeToken, token, s.StopReason)
	}
	if turns := r.fake.turns(); len(turns) != 1 || len(turns[0].userTexts()) != 1 || turns[0].userTexts()[0] != prompt {
		t.Fatalf("the model was shown %+v, want only the prompt", turns)
	}
}

func TestOpenCode_OwnerKilledMidTurnLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	newOpenCodeRig(t).killOwnerMidTurnThenResume(t, openCodeSlowPrompt, "resume", true)
}

func TestOpenCode_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	newOpenCodeRig(t).cancelSlowTurnFromAnotherProcess(t, openCodeSlowPrompt)
}

func TestOpenCode_PermissionModeAnswersOpenCodeBashRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode    string
		allowed bool
		status  string // of the tool call's result
		answer  string // what the model answered after the call
	}{
		{"approve-all", true, "completed", "TOOL-OUTPUT-42"},
		{"deny-all", false, "failed", "The user rejected permission"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			r := newOpenCodeRig(t)
			id, evs, call := r.startToolTurn(t, c.mode, openCodeToolWord, c.allowed, c.status)
			// The model asked for the call and was sent its result.
			turns := r.fake.turns()
			if len(turns) != 2 || !strings.Contains(turns[1].input(), call) {
				t.Fatalf("the model was not sent the result of tool call %s: %d requests", call, len(turns))
			}
			if got := turns[1].toolResults(); len(got) != 1 || !strings.Contains(got[0], c.answer) || !c.allowed && strings.Contains(got[0], "TOOL-OUTPUT-42") {
				t.Fatalf("the tool results the model was sent: %q, want one with %q", got, c.answer)
			}
			if got := agentText(evs, lastTurn(evs)); !strings.Contains(got, fmt.Sprintf("tool done %d: ", turns[1].N)) || !strings.Contains(got, c.answer) {
				t.Fatalf("the answer after the tool: %q", got)
			}
			if s := r.session(id); s.StopReason != "end_turn" {
				t.Fatalf("stop reason %q", s.StopReason)
			}
		})
	}
}

func TestOpenCode_AgentsProbeShowsItsCapabilities(t *testing.T) {
	t.Parallel()
	caps := newOpenCodeRig(t).probe(t, openCodeVersion)
	for _, want := range []string{"resume", "list", "fork", "close"} {
		if _, ok := caps.SessionCapabilities[want]; !ok {
			t.Errorf("sessionCapabilities lack %q: %v", want, caps.SessionCapabilities)
		}
	}
}

func TestOpenCode_SessionOpenCodeNoLongerHasFallsBackToAFreshSessionWithTheHistory(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	first := "remember the word MANGO for later"
	id, res := r.start("--agent", "opencode", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	firstAnswer := agentText(r.events(id), lastTurn(r.events(id)))
	oldToken := r.session(id).ResumeToken
	// OpenCode's database is gone (wiped, another machine): it answers the
	// resume with a generic -32603 and its session list lacks the session.
	if err := os.RemoveAll(filepath.Join(r.dataDir, "opencode")); err != nil {
		t.Fatal(err)
	}

	second := "which word did I ask you to remember"
	res = r.run("prompt", id, second)
	if res.code != 0 {
		t.Fatalf("prompt after OpenCode lost the session: %s", res)
	}
	r.assertNoAgentSurvives(id, "prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32603") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	warned := false
	for _, m := range ofType(evs, eventlog.EventMarker) {
		warned = warned || m.Severity == "warning"
	}
	if !warned {
		t.Error("no warning marker about the session that could not be restored")
	}
	if s := r.session(id); s.ResumeToken == "" || s.ResumeToken == oldToken || s.StopReason != "end_turn" {
		t.Fatalf("record after the fallback: token %q (old %q), stop %q", s.ResumeToken, oldToken, s.StopReason)
	}
	// The fresh OpenCode session was told the history in the resume context.
	turns := r.fake.turns()
	users := turns[len(turns)-1].userTexts()
	if len(users) != 1 || !strings.Contains(users[0], "RESUME CONTEXT") || !strings.Contains(users[0], first) ||
		!strings.Contains(users[0], firstAnswer) || !strings.Contains(users[0], second) {
		t.Fatalf("the model was shown %q, want one resume context with the first turn and the new prompt", users)
	}
	// The next process resumes the new OpenCode session natively.
	if res := r.run("prompt", id, "and once more"); res.code != 0 {
		t.Fatalf("third prompt: %s", res)
	}
	if starts := ofType(r.events(id), eventlog.EventAgentStarted); starts[len(starts)-1].Restore != "resume" {
		t.Fatalf("third agent_started: %+v", starts[len(starts)-1])
	}
	r.assertNoAgentSurvives(id, "the last prompt exited")
}
