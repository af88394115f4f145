package state

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func usageUpdate(turn string, used int64, cost float64) *eventlog.Event {
	size := int64(100000)
	return &eventlog.Event{Type: eventlog.EventUsage, TurnID: turn, Used: &used, Size: &size, Cost: &eventlog.Cost{Amount: cost, Currency: "USD"}}
}

func TestAccountUsage_TotalFollowsTheAgentsCountAcrossItsRestarts(t *testing.T) {
	type step struct {
		token     string
		ev        *eventlog.Event
		wantTotal float64
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"one agent session: the latest cumulative figure", []step{
			{"a", usageUpdate("t1", 10, 0.001), 0.001},
			{"a", usageUpdate("t2", 20, 0.002), 0.002},
			{"a", usageUpdate("t3", 30, 0.003), 0.003},
		}},
		{"a native restore that keeps counting adds nothing twice", []step{
			{"a", usageUpdate("t1", 10, 0.5), 0.5},
			{"a", usageUpdate("t2", 10, 0.75), 0.75},
		}},
		{"the agent counts again from zero in the same session", []step{
			{"a", usageUpdate("t1", 10, 0.5), 0.5},
			{"a", usageUpdate("t2", 10, 0.25), 0.75},
			{"a", usageUpdate("t3", 10, 0.5), 1},
		}},
		{"a fresh agent session starts a new count", []step{
			{"a", usageUpdate("t1", 10, 0.5), 0.5},
			{"b", usageUpdate("t2", 10, 0.75), 1.25},
		}},
		{"token counts do not touch the cost", []step{
			{"a", usageUpdate("t1", 10, 0.5), 0.5},
			{"a", &eventlog.Event{Type: eventlog.EventUsage, TurnID: "t1", Tokens: &eventlog.Tokens{Input: 3, Output: 4, Total: 7}}, 0.5},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Session
			for i, st := range tc.steps {
				s.AccountUsage(st.ev, st.token)
				if got := s.Usage.Cost.Amount; roundCost(got) != st.wantTotal || st.ev.SessionCost == nil || st.ev.SessionCost.Amount != got {
					t.Fatalf("step %d: total %v (event says %+v), want %v", i, got, st.ev.SessionCost, st.wantTotal)
				}
			}
		})
	}
}

func TestAccountUsage_KeepsTheLatestWindowSumsTokensCountsTurns(t *testing.T) {
	var s Session
	s.AccountUsage(usageUpdate("t1", 10, 0.001), "a")
	s.AccountUsage(&eventlog.Event{Type: eventlog.EventUsage, TurnID: "t1", Tokens: &eventlog.Tokens{Input: 3, Output: 4, Total: 7}}, "a")
	s.AccountUsage(usageUpdate("t2", 25, 0.002), "a")
	s.AccountUsage(&eventlog.Event{Type: eventlog.EventUsage, TurnID: "t2", Tokens: &eventlog.Tokens{Input: 5, Output: 1, Total: 6, Thought: 2}}, "a")
	u := s.Usage
	if u.Used != 25 || u.Size != 100000 || u.TurnsWithUsage != 2 || *u.Tokens != (eventlog.Tokens{Input: 8, Output: 5, Total: 13, Thought: 2}) {
		t.Fatalf("totals %+v tokens %+v", u, u.Tokens)
	}
	if got := u.Cost.String(); got != "0.002 USD" {
		t.Fatalf("cost %q", got)
	}
}
