package owner

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// A turn's request is its own user message; messages steered into it while
// it ran are added after it, never in its place (a steer and then a killed
// owner made the continuation quote only the steer, 14 of 14 trials).
func TestDescribeTurn_TheRequestIsTheTurnsOwnMessageWithItsSteers(t *testing.T) {
	turn := func(msgs ...eventlog.Event) []eventlog.Event {
		evs := []eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: "t2", Source: eventlog.SourceUser}}
		for _, m := range msgs {
			m.Type, m.TurnID = eventlog.EventUserMessage, "t2"
			evs = append(evs, m)
		}
		return append(evs, eventlog.Event{Type: eventlog.EventPromptSent, TurnID: "t2"})
	}
	cases := []struct {
		name    string
		evs     []eventlog.Event
		request string
		has     []string
	}{
		{"no steer", turn(eventlog.Event{Content: "write the report"}), "write the report", nil},
		{"one steer", turn(eventlog.Event{Content: "write the report"}, eventlog.Event{Content: "in French", Source: eventlog.SourceSteer}),
			"write the report", []string{"in French"}},
		{"two steers", turn(eventlog.Event{Content: "write the report"}, eventlog.Event{Content: "in French", Source: eventlog.SourceSteer},
			eventlog.Event{Content: "and short", Source: eventlog.SourceSteer}), "write the report", []string{"in French", "and short"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := DescribeTurn(c.evs, "t2")
			if info.UserText != c.request {
				t.Fatalf("UserText %q, want the turn's own %q", info.UserText, c.request)
			}
			req := info.Request()
			if !strings.HasPrefix(req, c.request) {
				t.Fatalf("Request %q does not start with the turn's own message", req)
			}
			last := len(c.request)
			for _, s := range c.has {
				i := strings.Index(req, s)
				if i < last {
					t.Fatalf("Request %q lacks the steer %q after what came before it", req, s)
				}
				last = i
			}
			if len(c.has) == 0 && req != c.request {
				t.Fatalf("Request %q, want just %q", req, c.request)
			}
		})
	}
}
