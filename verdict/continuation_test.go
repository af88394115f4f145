package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestDecideContinuation_PausesOnSpentMaxCostAndClearsWhenRaised(t *testing.T) {
	now := time.Now()
	s := state.Session{ID: "s1", State: state.StateWaitingForInput, ResumeToken: "tok", AgentLaunched: true,
		Interrupted: &state.Interruption{Turn: "t3"}, Usage: &state.UsageTotals{Cost: &eventlog.Cost{Amount: 0.002, Currency: "USD"}}}
	pol := ContinuationPolicy{AutoContinue: true, MaxAttempts: 3, Window: time.Minute, MaxCost: 0.002}
	d := DecideContinuation(&s, nil, pol, now)
	if d.Continue || d.Pause == nil || d.Pause.Kind != state.PauseCost || d.Pause.Reason != "the session has spent 0.002 USD of its max_cost 0.002 USD" {
		t.Fatalf("at the cap: %+v pause %+v", d, d.Pause)
	}
	s.Pause = d.Pause
	pol.MaxCost = 0.01
	d = DecideContinuation(&s, nil, pol, now)
	if !d.Continue || d.Cleared == nil || d.Cleared.Kind != state.PauseCost || !strings.Contains(d.ClearedBecause, "max_cost") {
		t.Fatalf("raised: %+v", d)
	}
}
