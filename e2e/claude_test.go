package e2e_test

// The Claude suite: see claude_rig_test.go for how Claude runs offline.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestClaude_PromptInANewProcessResumesTheClaudeSessionWithItsContext(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	first := "remember the word PAPAYA for later"
	began := time.Now()
	id, res := r.start("--agent", "claude", first)
	took := time.Since(began)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	if !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	logTimings(t, "start with a prompt", began, took, r.events(id))
	r.assertNoAgentSurvives("start exited")
	token := r.session(id).ResumeToken
	if token == "" {
		t.Fatal("no resume token after the first turn")
	}

	second := "which word did I ask you to remember"
	began = time.Now()
	res = r.run("prompt", id, second)
	took = time.Since(began)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs := r.events(id)
	logTimings(t, "prompt in a new process", began, took, evs)
	assertNoSeqGap(t, evs)
	starts := codexAgentStarts(evs)
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	if got := agentText(evs, lastTurn(evs)); got != "ack 2: "+second {
		t.Fatalf("second turn's answer: %q", got)
	}
	s := r.session(id)
	agentUsage(t, evs, s, reported{context: true, cost: true, tokens: true})
	if s.ResumeToken != token || s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the second turn: token %q (was %q), state %s, stop %q", s.ResumeToken, token, s.State, s.StopReason)
	}

	// The model saw the first turn when it answered the second: the
	// conversation was restored, not merely its id reused.
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if got := reqs[1].userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(reqs[1].input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the second request:\n%s", reqs[1].input())
	}
}

func TestClaude_OwnerKilledMidTurnLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	first := "first fast turn about apples"
	id, res := r.start("--agent", "claude", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}

	owner := r.spawn("prompt", id, claudeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(claudeSlowPrompt))
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives("the owner was SIGKILLed")
	before := len(r.requests())
	killedAt := len(r.eventsSoFar(id)) // the kill may have torn the last line

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives("resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	evs := all[killedAt:]
	if starts := codexAgentStarts(evs); len(starts) != 1 || starts[0].Restore != "resume" {
		t.Errorf("agent_started after the kill: %+v", starts)
	}
	var continuations []eventlog.Event
	for _, e := range ofType(evs, eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s", len(continuations), codexDump(evs))
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}
	// The continuation's model request carried the earlier turns.
	reqs := r.requests()
	if len(reqs) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(reqs)-before)
	}
	users := reqs[len(reqs)-1].userTexts()
	if len(users) < 3 || users[0] != first || users[1] != claudeSlowPrompt {
		t.Fatalf("user messages the model saw for the continuation: %q", users)
	}
	if !strings.Contains(reqs[len(reqs)-1].input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the continuation's request")
	}

	// A second resume has nothing to continue: no turn, no model request.
	turns := len(ofType(r.events(id), eventlog.EventTurnStarted))
	if res := r.run("resume", id); res.code != 0 {
		t.Fatalf("second resume: %s", res)
	}
	if n := len(ofType(r.events(id), eventlog.EventTurnStarted)); n != turns {
		t.Fatalf("the second resume started %d turns", n-turns)
	}
	if n := len(r.requests()); n != len(reqs) {
		t.Fatalf("the second resume sent %d model requests", n-len(reqs))
	}
	r.assertNoAgentSurvives("the second resume exited")
}

func TestClaude_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	id, res := r.start("--agent", "claude", "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, claudeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(claudeSlowPrompt))
	cancelled := time.Now()
	if res := r.run("cancel", id); res.code != 0 {
		owner.cmd.Process.Kill()
		t.Fatalf("cancel: %s", res)
	}
	res = owner.wait(t)
	t.Logf("the prompt ended %s after kandev cancel returned", time.Since(cancelled).Round(time.Millisecond))
	if res.code != 0 && res.code != 130 {
		t.Errorf("the cancelled prompt exited %d, want 0 or 130\n%s", res.code, res)
	}
	r.assertNoAgentSurvives("the cancelled prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	ended := ofType(evs, eventlog.EventTurnEnded)
	if len(ended) == 0 || ended[len(ended)-1].StopReason != "cancelled" {
		t.Fatalf("turn_ended events: %+v", ended)
	}
	if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
	}
	if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
		t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
	}
	if res := r.run("prompt", id, "after the cancel"); res.code != 0 || !strings.Contains(res.stdout, "after the cancel") {
		t.Fatalf("prompt after cancel: %s", res)
	}
}

func TestClaude_PermissionModeAnswersClaudesBashRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    string
		allowed bool
		result  string // what the model is sent as the tool's result
	}{
		{"approve-all", true, "TOOL-OUTPUT-42"},
		{"deny-all", false, "User refused permission to run tool"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			r := newClaudeRig(t, "-tool-word", claudeToolWord, "-tool-command", claudeToolCmd)
			id, res := r.start("--agent", "claude", "--permissions", tc.mode, "please "+claudeToolWord+" now")
			if res.code != 0 {
				t.Fatalf("start: %s", res)
			}
			r.assertNoAgentSurvives("start exited")
			_, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt"))
			if ran := err == nil; ran != tc.allowed {
				t.Fatalf("the command ran: %v, want %v", ran, tc.allowed)
			}
			evs := r.events(id)
			assertNoSeqGap(t, evs)
			asked, answered := ofType(evs, eventlog.EventPermissionRequest), ofType(evs, eventlog.EventPermissionResolved)
			if len(asked) != 1 || len(answered) != 1 || !strings.Contains(string(answered[0].Data), fmt.Sprintf(`"allowed":%v`, tc.allowed)) {
				t.Fatalf("permission events: %+v %+v", asked, answered)
			}
			call := asked[0].ToolCallID
			if call == "" || answered[0].ToolCallID != call {
				t.Fatalf("permission request and answer name different tool calls: %q, %q", call, answered[0].ToolCallID)
			}
			results := ofType(evs, eventlog.EventToolResult)
			if len(results) == 0 || results[len(results)-1].ToolCallID != call || !strings.Contains(results[len(results)-1].Content, tc.result) {
				t.Fatalf("tool_result events: %+v\nlog:\n%s", results, codexDump(evs))
			}
			// The model asked for the tool, then got its result back.
			reqs := r.requests()
			if len(reqs) != 2 || !strings.Contains(reqs[1].input(), `"tool_result"`) || !strings.Contains(reqs[1].input(), tc.result) || !strings.Contains(reqs[1].input(), call) {
				t.Fatalf("the model was not sent the result of tool call %s (%d requests)", call, len(reqs))
			}
			if got := agentText(evs, "t1"); !strings.Contains(got, "tool done 2: "+tc.result) {
				t.Fatalf("the answer after the tool: %q", got)
			}
			if s := r.session(id); s.StopReason != "end_turn" {
				t.Fatalf("stop reason %q", s.StopReason)
			}
		})
	}
}

func TestClaude_NeverPromptedSessionFallsBackToANewClaudeSession(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	began := time.Now()
	id, res := r.start("--agent", "claude")
	took := time.Since(began)
	if res.code != 0 {
		t.Fatalf("start without a prompt: %s", res)
	}
	t.Logf("start without a prompt: %s in all", took.Round(time.Millisecond))
	oldToken := r.session(id).ResumeToken
	res = r.run("prompt", id, "hello after an empty start")
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs := r.events(id)
	starts := codexAgentStarts(evs)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32002") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	s := r.session(id)
	if s.State != state.StateWaitingForInput || s.ResumeToken == "" || s.ResumeToken == oldToken {
		t.Fatalf("record after the fallback: state %s, token %q (old %q)", s.State, s.ResumeToken, oldToken)
	}
	if reqs := r.requests(); len(reqs) != 1 || len(reqs[0].userTexts()) != 1 {
		t.Fatalf("want one model request with only the prompt (no history to inject), got %d", len(reqs))
	}
}

func TestClaude_AgentsProbeShowsClaudesCapabilities(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			ProbeError   string `json:"probe_error"`
			Capabilities struct {
				AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
				AgentCapabilities struct {
					LoadSession         bool                       `json:"loadSession"`
					SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
			}
		}
	}
	decodeJSON(t, r.mustRun("--json", "agents", "--probe").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != "claude" {
			continue
		}
		c := a.Capabilities
		if !a.Installed || a.ProbeError != "" || c.AgentInfo.Version != claudeACPVersion || !c.AgentCapabilities.LoadSession {
			t.Fatalf("claude probe: %+v", a)
		}
		for _, k := range []string{"resume", "list", "fork", "close"} {
			if _, ok := c.AgentCapabilities.SessionCapabilities[k]; !ok {
				t.Errorf("sessionCapabilities lacks %s: %v", k, c.AgentCapabilities.SessionCapabilities)
			}
		}
		r.assertNoAgentSurvives("the probe")
		return
	}
	t.Fatal("kandev agents lists no claude")
}
