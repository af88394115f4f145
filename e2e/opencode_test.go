package e2e_test

// The OpenCode suite: the real OpenCode (see opencode_rig_test.go) driven
// through the built kandev binary, offline.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	starts := ofType(evs, state.EventAgentStarted)
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
	starts := ofType(evs, state.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	for _, m := range ofType(evs, state.EventMarker) {
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
	r := newOpenCodeRig(t)
	first := "first fast turn about apples"
	id, res := r.start("--agent", "opencode", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	firstAnswer := agentText(r.events(id), lastTurn(r.events(id)))

	owner := r.spawn("prompt", id, openCodeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", openCodeStreamingTurn(openCodeSlowPrompt))
	if live := liveProcessesWithEnv("XDG_DATA_HOME", r.dataDir); len(live) == 0 {
		t.Fatal("no OpenCode process is running the slow turn")
	}
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives(id, "the owner was SIGKILLed")
	killedAt := len(r.eventsSoFar(id)) // the kill may have torn the last line
	before := len(r.fake.turns())

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives(id, "resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	evs := all[killedAt:]
	if starts := ofType(evs, state.EventAgentStarted); len(starts) != 1 || starts[0].Restore != "resume" {
		t.Errorf("agent_started after the kill: %+v", starts)
	}
	var continuations []state.Event
	for _, e := range ofType(evs, state.EventTurnStarted) {
		if e.Source == state.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s", len(continuations), res)
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}
	// The continuation's model request carried the earlier turns.
	turns := r.fake.turns()
	if len(turns) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(turns)-before)
	}
	q := turns[len(turns)-1]
	users := q.userTexts()
	if len(users) < 3 || users[0] != first || users[1] != openCodeSlowPrompt || users[len(users)-1] == openCodeSlowPrompt {
		t.Fatalf("user messages the model saw for the continuation: %q", users)
	}
	if !strings.Contains(q.input(), firstAnswer) {
		t.Fatalf("the first answer is missing from the continuation's request:\n%s", q.input())
	}
	if answer := agentText(all, continuations[0].TurnID); answer != fmt.Sprintf("ack %d: %s", q.N, start60(users[len(users)-1])) {
		t.Fatalf("the continuation's answer %q is not the model's reply to request %d", answer, q.N)
	}

	// A second resume finds nothing owed: no turn, no model request.
	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("second resume: %s", res)
	}
	r.assertNoAgentSurvives(id, "the second resume exited")
	if n := len(ofType(r.events(id), state.EventTurnStarted)) - len(ofType(all, state.EventTurnStarted)); n != 0 {
		t.Fatalf("the second resume started %d turns", n)
	}
	if n := len(r.fake.turns()); n != len(turns) {
		t.Fatalf("the second resume sent %d model requests", n-len(turns))
	}
}

func TestOpenCode_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	id, res := r.start("--agent", "opencode", "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, openCodeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", openCodeStreamingTurn(openCodeSlowPrompt))
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
	r.assertNoAgentSurvives(id, "the cancelled prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	ended := ofType(evs, state.EventTurnEnded)
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
	r.assertNoAgentSurvives(id, "the last prompt exited")
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
			id, res := r.start("--agent", "opencode", "--permissions", c.mode, "please "+openCodeToolWord+" now")
			if res.code != 0 {
				t.Fatalf("start: %s", res)
			}
			r.assertNoAgentSurvives(id, "start exited")
			_, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt"))
			if ran := err == nil; ran != c.allowed {
				t.Fatalf("the command ran: %v, want %v", ran, c.allowed)
			}
			evs := r.events(id)
			assertNoSeqGap(t, evs)
			asked, resolved := ofType(evs, state.EventPermissionRequest), ofType(evs, state.EventPermissionResolved)
			if len(asked) != 1 || len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), fmt.Sprintf(`"allowed":%v`, c.allowed)) {
				t.Fatalf("permission events: %+v %+v", asked, resolved)
			}
			call := asked[0].ToolCallID
			if call == "" || resolved[0].ToolCallID != call {
				t.Fatalf("permission request and answer name different tool calls: %q, %q", call, resolved[0].ToolCallID)
			}
			results := ofType(evs, state.EventToolResult)
			if len(results) != 1 || results[0].ToolCallID != call || results[0].ToolStatus != c.status {
				t.Fatalf("tool_result events: %+v", results)
			}
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
	r := newOpenCodeRig(t)
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			Capabilities struct {
				AgentCapabilities struct {
					LoadSession         bool                       `json:"loadSession"`
					SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
				AgentInfo struct{ Name, Version string } `json:"agentInfo"`
			}
		}
	}
	decodeJSON(t, r.mustRun("agents", "--probe", "--json").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != "opencode" {
			continue
		}
		caps := a.Capabilities.AgentCapabilities
		if !a.Installed || !caps.LoadSession || a.Capabilities.AgentInfo.Version != openCodeVersion {
			t.Fatalf("opencode: %+v", a)
		}
		for _, want := range []string{"resume", "list", "fork", "close"} {
			if _, ok := caps.SessionCapabilities[want]; !ok {
				t.Errorf("sessionCapabilities lack %q: %v", want, caps.SessionCapabilities)
			}
		}
		if n := len(r.fake.turns()); n != 0 {
			t.Errorf("probing sent %d model requests", n)
		}
		r.assertNoAgentSurvives("", "kandev agents --probe exited")
		return
	}
	t.Fatal("kandev agents lists no opencode")
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
	starts := ofType(evs, state.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32603") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	warned := false
	for _, m := range ofType(evs, state.EventMarker) {
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
	if starts := ofType(r.events(id), state.EventAgentStarted); starts[len(starts)-1].Restore != "resume" {
		t.Fatalf("third agent_started: %+v", starts[len(starts)-1])
	}
	r.assertNoAgentSurvives(id, "the last prompt exited")
}
