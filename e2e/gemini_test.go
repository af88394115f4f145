package e2e_test

// The Gemini suite (see gemini_rig_test.go): what is Gemini CLI's own. The
// scenarios every agent shares are its row of scenarios_test.go.

import (
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
	r.underCI() // the subject is the restore in each new command: no warm owner
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
