package e2e_test

// The Copilot suite: the real Copilot CLI (see copilot_rig_test.go) driven
// through the built kandev binary, offline.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestCopilot_PromptInANewProcessLoadsTheCopilotSessionWithItsContext(t *testing.T) {
	t.Parallel()
	r := newCopilotRig(t)
	first := "remember the word PAPAYA for later"
	began := time.Now()
	id, res := r.start("--agent", "copilot", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	openCodeTimings(t, "start", began, time.Since(began), r.events(id))
	if !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	r.assertNoAgentSurvives(id, "start exited")
	token := r.session(id).ResumeToken
	if token == "" {
		t.Fatal("no resume token after the first turn")
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
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "load" || starts[1].FallbackReason != "" {
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
	if s := r.session(id); s.ResumeToken != token || s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the second turn: token %q (was %q), state %s, stop %q", s.ResumeToken, token, s.State, s.StopReason)
	}
	// The model saw the first turn when it answered the second: Copilot
	// loaded the conversation, kandev did not inject it.
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(q.input(), firstAnswer) {
		t.Fatalf("the first answer %q is missing from the second request:\n%s", firstAnswer, q.input())
	}
}

func TestCopilot_NeverPromptedSessionFallsBackToAFreshCopilotSession(t *testing.T) {
	t.Parallel()
	r := newCopilotRig(t)
	id, res := r.start("--agent", "copilot")
	if res.code != 0 {
		t.Fatalf("start without a prompt: %s", res)
	}
	r.assertNoAgentSurvives(id, "the empty start exited")
	token := r.session(id).ResumeToken
	prompt := "hello after an empty start"
	if res := r.run("prompt", id, prompt); res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives(id, "prompt exited")
	// Copilot stores a session only once it has a turn: the load fails with
	// "not found" and kandev opens a fresh session, saying so.
	evs := r.events(id)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "session/load: -32002") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	if m := ofType(evs, eventlog.EventMarker); len(m) != 1 || m[0].Kind != "resume_failed" || !strings.Contains(m[0].Summary, "no history") {
		t.Fatalf("markers: %+v", m)
	}
	if s := r.session(id); s.ResumeToken == token || s.StopReason != "end_turn" {
		t.Fatalf("record: token %q (was %q), stop %q", s.ResumeToken, token, s.StopReason)
	}
	if turns := r.fake.turns(); len(turns) != 1 || len(turns[0].userTexts()) != 1 || turns[0].userTexts()[0] != prompt {
		t.Fatalf("the model was shown %+v, want only the prompt", turns)
	}
}

func TestCopilot_OwnerKilledMidTurnLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	newCopilotRig(t).killOwnerMidTurnThenResume(t, copilotSlowPrompt, "load", false)
}

func TestCopilot_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	newCopilotRig(t).cancelSlowTurnFromAnotherProcess(t, copilotSlowPrompt)
}

// Copilot asks before every shell command. Approved, the command runs and
// the model is sent its output in the same turn; refused, Copilot ends the
// turn without asking the model again, and the model is told of the refusal
// with the next prompt.
func TestCopilot_PermissionModeAnswersCopilotBashRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode    string
		allowed bool
		status  string // of the tool call's result
		result  string // the tool result the model is sent
	}{
		{"approve-all", true, "completed", "TOOL-OUTPUT-42"},
		{"deny-all", false, "failed", "The user rejected this tool call."},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			r := newCopilotRig(t)
			id, _, call := r.startToolTurn(t, c.mode, copilotToolWord, c.allowed, c.status)
			if s := r.session(id); s.StopReason != "end_turn" {
				t.Fatalf("stop reason %q", s.StopReason)
			}
			if !c.allowed {
				if n := len(r.fake.turns()); n != 1 {
					t.Fatalf("the model got %d requests in the refused turn, want 1 (Copilot ends the turn)", n)
				}
				if res := r.run("prompt", id, "what happened"); res.code != 0 {
					t.Fatalf("prompt after the refusal: %s", res)
				}
				r.assertNoAgentSurvives(id, "the prompt after the refusal exited")
			}
			// The model asked for the call and was sent its result.
			turns := r.fake.turns()
			if len(turns) != 2 || !strings.Contains(turns[1].input(), call) {
				t.Fatalf("the model was not sent the result of tool call %s: %d requests", call, len(turns))
			}
			if got := turns[1].toolResults(); len(got) != 1 || !strings.Contains(got[0], c.result) || !c.allowed && strings.Contains(got[0], "TOOL-OUTPUT-42") {
				t.Fatalf("the tool results the model was sent: %q, want one with %q", got, c.result)
			}
			if c.allowed {
				if got := agentText(r.events(id), lastTurn(r.events(id))); !strings.Contains(got, fmt.Sprintf("tool done %d: ", turns[1].N)) {
					t.Fatalf("the answer after the tool: %q", got)
				}
			}
		})
	}
}

func TestCopilot_AgentsProbeShowsItsCapabilities(t *testing.T) {
	t.Parallel()
	caps := newCopilotRig(t).probe(t, copilotVersion)
	got := []string{}
	for k := range caps.SessionCapabilities {
		got = append(got, k)
	}
	if len(got) != 2 || caps.SessionCapabilities["list"] == nil || caps.SessionCapabilities["close"] == nil {
		t.Errorf("sessionCapabilities %v, want list and close", got)
	}
}
