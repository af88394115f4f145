package notify

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

func TestFor_WhichEventsNeedAPerson(t *testing.T) {
	cases := []struct {
		name     string
		e        eventlog.Event
		detached bool
		want     string // "" for no notification
		badge    string
	}{
		{"a parked permission", eventlog.Event{Type: eventlog.EventPermissionRequest, Deferred: true, ToolName: "write"}, true, EventPermission, verdict.BadgeWaitingForPermission},
		{"a permission answered in the terminal", eventlog.Event{Type: eventlog.EventPermissionRequest, ToolName: "write"}, false, "", ""},
		{"a turn ended in a detached owner", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopEndTurn}, true, EventTurnEnded, verdict.BadgeIdle},
		{"a turn ended in the foreground", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopEndTurn}, false, "", ""},
		{"a turn failed in a detached owner", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopProcessExit}, true, EventTurnFailed, verdict.BadgeIdle},
		{"a turn error in a detached owner", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopError}, true, EventTurnFailed, verdict.BadgeIdle},
		{"a turn failed in the foreground", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopError}, false, "", ""},
		{"a turn cut by SIGTERM is continued, not announced", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopShutdown}, true, "", ""},
		{"a rate-limited turn: its marker tells it", eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: state.StopRateLimited}, true, "", ""},
		{"a pause, in the foreground too", eventlog.Event{Type: eventlog.EventMarker, Kind: "continuation_paused", Summary: "Automatic continuation paused: x"}, false, EventPaused, verdict.BadgePaused},
		{"a usage limit, in the foreground too", eventlog.Event{Type: eventlog.EventMarker, Kind: "usage_limit", Summary: "The agent's usage limit was reached"}, false, EventUsageLimit, verdict.BadgeWaitingForLimit},
		{"a wake report, in the foreground too", eventlog.Event{Type: eventlog.EventMarker, Kind: "wake_report", Summary: "resumed 1 turn(s), spent 0.001 USD"}, false, EventWake, verdict.BadgeIdle},
		{"another marker", eventlog.Event{Type: eventlog.EventMarker, Kind: "session_repaired"}, true, "", ""},
		{"an agent message", eventlog.Event{Type: eventlog.EventAgentMessage, Content: "hi"}, true, "", ""},
	}
	for _, c := range cases {
		n, ok := For(c.e, c.detached)
		if ok != (c.want != "") || n.Event != c.want || n.Badge != c.badge {
			t.Errorf("%s: got %+v (%v), want event %q badge %q", c.name, n, ok, c.want, c.badge)
		}
		if ok && n.Summary == "" {
			t.Errorf("%s: no summary", c.name)
		}
	}
}
