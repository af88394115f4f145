package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// Gemini CLI 0.61 overwrites a stored conversation that is loaded in the UTC
// minute it was created, then answers the load "No previous sessions found".
// A prompt seconds after start must still reach the model with the first
// turn: kandev falls back to a fresh Gemini session and sends the resume
// context. Should the two runs straddle a minute, the load itself must work.
func TestGemini_PromptSecondsAfterStartReachesTheModelWithTheFirstTurn(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	waitForEarlyInMinute()
	first := "remember the word PAPAYA for later"
	id, res := r.start("--agent", geminiAgent, first)
	if res.code != 0 || !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start: %s", res)
	}
	r.assertNoAgentSurvives("start exited")

	second := "which word did I ask you to remember"
	res = r.run("prompt", id, second)
	if res.code != 0 {
		t.Fatalf("a prompt seconds after start failed: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[0].Restore != "new" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	q := reqs[1]
	sameMinute := eventTime(t, starts[0]).Truncate(time.Minute).Equal(eventTime(t, starts[1]).Truncate(time.Minute))
	if !sameMinute {
		t.Logf("start and prompt straddled a minute: checking a plain load")
		if starts[1].Restore != "load" || starts[1].FallbackReason != "" {
			t.Fatalf("restore in a later minute: %+v", starts[1])
		}
		if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
			t.Fatalf("user texts the model saw after the load: %q", got)
		}
		return
	}

	// The same minute: the load is answered "gone", which is final, so kandev
	// starts a fresh Gemini session and says so; no retry loop, no exit 6.
	if starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "No previous sessions found") {
		t.Fatalf("restore after a same-minute load: %+v", starts[1])
	}
	warned := false
	for _, m := range ofType(evs, eventlog.EventMarker) {
		warned = warned || m.Severity == "warning" && strings.Contains(m.Summary, "No previous sessions found") &&
			strings.Contains(m.Summary, "fresh agent session with the stored history")
	}
	if !warned {
		t.Errorf("no warning marker saying a fresh session takes the stored history:\n%s", codexDump(evs))
	}
	users := q.userTexts()
	if len(users) != 1 {
		t.Fatalf("user texts the model saw for the prompt: %q", users)
	}
	for _, want := range []string{"RESUME CONTEXT FOR CONTINUING TASK", "[USER]: " + first, "[ASSISTANT]: ack 1: " + first, "=== CURRENT REQUEST ===\n" + second} {
		if !strings.Contains(users[0], want) {
			t.Fatalf("the prompt the model saw lacks %q:\n%s", want, users[0])
		}
	}
	s := r.session(id)
	if s.State != state.StateWaitingForInput || s.StopReason != "end_turn" || s.PendingContext || s.ResumeToken == "" {
		t.Fatalf("record after the fallback: state %s, stop %q, pending context %v, token %q", s.State, s.StopReason, s.PendingContext, s.ResumeToken)
	}
}

// In a later minute the Gemini session loads: the model sees the earlier
// turns as its own history, with no resume context. The figures for the
// docs come from this test.
func TestGemini_PromptInALaterMinuteLoadsTheGeminiSession(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	first := "remember the word MANGO for later"
	began := time.Now()
	id, res := r.start("--agent", geminiAgent, first)
	startWall := time.Since(began)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	evs := r.events(id)
	startup := eventTime(t, ofType(evs, eventlog.EventAgentStarted)[0]).Sub(began)
	turn := geminiTurnTime(t, evs, lastTurn(evs))
	token := r.session(id).ResumeToken

	waitForNextMinute(eventTime(t, evs[len(evs)-1]))
	second := "which word did I ask you to remember"
	began = time.Now()
	res = r.run("prompt", id, second)
	promptWall := time.Since(began)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs = r.events(id)
	assertNoSeqGap(t, evs)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "load" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	if s := r.session(id); s.ResumeToken != token || s.State != state.StateWaitingForInput {
		t.Fatalf("record after the load: token %q (was %q), state %s", s.ResumeToken, token, s.State)
	}
	if n := len(ofType(evs, eventlog.EventUserMessage)); n != 2 {
		t.Fatalf("the load's replay was recorded again: %d user messages\n%s", n, codexDump(evs))
	}
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	q := reqs[1]
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user texts the model saw after the load: %q", got)
	}
	if got := q.modelTexts(); len(got) != 1 || got[0] != "ack 1: "+first {
		t.Fatalf("the model's own history after the load: %q", got)
	}
	promptStartup := eventTime(t, starts[1]).Sub(began)
	t.Logf("figures: start %s (agent start-up %s, turn %s); prompt in a new process %s, of which agent start-up and load %s",
		startWall.Round(10*time.Millisecond), startup.Round(10*time.Millisecond), turn.Round(10*time.Millisecond),
		promptWall.Round(10*time.Millisecond), promptStartup.Round(10*time.Millisecond))
}

// geminiTurnTime is the time from a turn's start to its end.
func geminiTurnTime(t *testing.T, evs []eventlog.Event, turn string) time.Duration {
	t.Helper()
	var from, to time.Time
	for _, e := range evs {
		if e.TurnID == turn && e.Type == eventlog.EventTurnStarted {
			from = eventTime(t, e)
		}
		if e.TurnID == turn && e.Type == eventlog.EventTurnEnded {
			to = eventTime(t, e)
		}
	}
	return to.Sub(from)
}

func TestGemini_PermissionModeAnswersShellCommandRequests(t *testing.T) {
	t.Parallel()
	fakeArgs := []string{"-tool-word", geminiToolWord, "-tool-command", geminiToolCmd}

	t.Run("approve-all runs the command and the model sees its output", func(t *testing.T) {
		t.Parallel()
		r := newGeminiRig(t, fakeArgs...)
		id, res := r.start("--agent", geminiAgent, "--permissions", "approve-all", "please "+geminiToolWord+" now")
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		r.assertNoAgentSurvives("start exited")
		if b, err := os.ReadFile(filepath.Join(r.cwd, "tool-proof.txt")); err != nil || string(b) != "ran\n" {
			t.Fatalf("the approved command did not run in the session cwd: %q, %v", b, err)
		}
		evs := r.events(id)
		assertNoSeqGap(t, evs)
		asked, resolved := ofType(evs, eventlog.EventPermissionRequest), ofType(evs, eventlog.EventPermissionResolved)
		if len(asked) != 1 || len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), `"allowed":true`) ||
			asked[0].ToolCallID == "" || resolved[0].ToolCallID != asked[0].ToolCallID || !strings.Contains(asked[0].ToolName, "tool-proof.txt") {
			t.Fatalf("permission events: %+v %+v", asked, resolved)
		}
		results := ofType(evs, eventlog.EventToolResult)
		if len(results) != 1 || results[0].ToolCallID != asked[0].ToolCallID || results[0].ToolStatus != "completed" {
			t.Fatalf("tool_result events: %+v\n%s", results, codexDump(evs))
		}
		reqs := r.requests()
		if len(reqs) != 2 || !strings.Contains(reqs[1].toolResponses(), "TOOL-OUTPUT-42") {
			t.Fatalf("the model was not sent the command's output: %d requests", len(reqs))
		}
		if got := agentText(evs, "t1"); !strings.HasPrefix(got, "tool done 2: ") {
			t.Fatalf("the answer after the tool: %q", got)
		}
		if s := r.session(id); s.StopReason != "end_turn" {
			t.Fatalf("stop reason %q", s.StopReason)
		}
	})

	t.Run("deny-all refuses the command and the model is told so", func(t *testing.T) {
		t.Parallel()
		r := newGeminiRig(t, fakeArgs...)
		id, res := r.start("--agent", geminiAgent, "--permissions", "deny-all", "please "+geminiToolWord+" now")
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		r.assertNoAgentSurvives("start exited")
		if _, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt")); err == nil {
			t.Fatal("the command ran although permission was denied")
		}
		evs := r.events(id)
		resolved := ofType(evs, eventlog.EventPermissionResolved)
		if len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), `"allowed":false`) {
			t.Fatalf("permission answers: %+v", resolved)
		}
		reqs := r.requests()
		if got := reqs[len(reqs)-1].toolResponses(); len(reqs) != 2 || strings.Contains(got, "TOOL-OUTPUT-42") || !strings.Contains(got, "canceled by the user") {
			t.Fatalf("the model was not told the command was refused: %d requests, tool responses %s", len(reqs), got)
		}
		if s := r.session(id); s.StopReason != "end_turn" || s.State != state.StateWaitingForInput {
			t.Fatalf("record after the denial: state %s, stop %q", s.State, s.StopReason)
		}
	})
}

func TestGemini_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	id, res := r.start("--agent", geminiAgent, "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, geminiSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(geminiSlowPrompt))
	if res := r.run("cancel", id); res.code != 0 {
		owner.cmd.Process.Kill()
		t.Fatalf("cancel: %s", res)
	}
	res = owner.wait(t)
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
	if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
		t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
	}
	if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
	}
}

func TestGemini_OwnerKilledMidStreamLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	first := "first fast turn about apples"
	id, res := r.start("--agent", geminiAgent, first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, geminiSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(geminiSlowPrompt))
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives("the owner was SIGKILLed")
	before := len(r.requests())
	killedAt := len(r.eventsSoFar(id))

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives("resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	var continuations []eventlog.Event
	for _, e := range ofType(all[killedAt:], eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s", len(continuations), codexDump(all[killedAt:]))
	}
	reqs := r.requests()
	if len(reqs) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(reqs)-before)
	}
	// Restored by load or, within the minute, by a fresh session with the
	// resume context: either way the model sees the first turn.
	if in := reqs[len(reqs)-1].input(); !strings.Contains(in, first) || !strings.Contains(in, "ack 1: "+first) {
		t.Fatalf("the continuation's request lacks the first turn:\n%s", in)
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}

	// A second resume finds nothing to continue: no turn, no model request.
	turns := len(ofType(r.events(id), eventlog.EventTurnStarted))
	if res := r.run("resume", id); res.code != 0 {
		t.Fatalf("second resume: %s", res)
	}
	r.assertNoAgentSurvives("the second resume exited")
	if n := len(ofType(r.events(id), eventlog.EventTurnStarted)); n != turns {
		t.Fatalf("the second resume started %d turns", n-turns)
	}
	if n := len(r.requests()); n != len(reqs) {
		t.Fatalf("the second resume sent %d model requests", n-len(reqs))
	}
}

func TestGemini_ProbeShowsLoadSessionOnly(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	var out struct {
		Agents []struct {
			Name         string
			Capabilities struct {
				AgentCapabilities struct {
					LoadSession         bool           `json:"loadSession"`
					SessionCapabilities map[string]any `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
				AgentInfo struct{ Name, Version string } `json:"agentInfo"`
			}
		}
	}
	decodeJSON(t, r.mustRun("--json", "agents", "--probe").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != geminiAgent {
			continue
		}
		c := a.Capabilities
		if !c.AgentCapabilities.LoadSession || len(c.AgentCapabilities.SessionCapabilities) != 0 ||
			c.AgentInfo.Name != "gemini-cli" || c.AgentInfo.Version != geminiVersion {
			t.Fatalf("probed capabilities: %+v", c)
		}
		r.assertNoAgentSurvives("the probe")
		return
	}
	t.Fatalf("no %s in the probe's output", geminiAgent)
}
