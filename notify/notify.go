// Package notify tells a person that a session needs them. For decides,
// from one event just written to a session's log, whether it does (a pure
// policy with a table test); Hook runs the user's [notify] command for it,
// detached and bounded by a timeout, so a notification can never block or
// fail the turn that caused it.
package notify

import (
	"fmt"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// Events a notification is sent for (Note.Event).
const (
	EventPermission = "permission" // a permission request is parked (defer mode)
	EventTurnEnded  = "turn_ended" // a turn ended in a detached owner
	EventTurnFailed = "turn_failed"
	EventPaused     = "paused"      // automatic continuation paused for an operator
	EventUsageLimit = "usage_limit" // the agent's usage limit was reached
	EventWake       = "wake"        // an unattended wake after a reset reports what it did
)

// Note is the JSON object the [notify] command reads on stdin.
type Note struct {
	Session string `json:"session"`
	Title   string `json:"title,omitempty"`
	Badge   string `json:"badge"`
	Event   string `json:"event"`
	Summary string `json:"summary"`
}

// For is the notification, if any, for event e of a session, written by an
// owner that runs detached (no one watches its output) or not. A person is
// needed when a permission is parked, a pause or a usage limit stops the
// work, and, in a detached owner only, when a turn ends or fails: in the
// foreground the person who sent the prompt sees that end.
func For(e eventlog.Event, detached bool) (Note, bool) {
	switch {
	case e.Type == eventlog.EventPermissionRequest && e.Deferred && e.ToolKind == "elicitation":
		return Note{Event: EventPermission, Badge: verdict.BadgeWaitingForPermission,
			Summary: "the agent asks: " + e.ToolName + " (kandev answer " + e.SessionID + " VALUE | kandev deny " + e.SessionID + ")"}, true
	case e.Type == eventlog.EventPermissionRequest && e.Deferred:
		return Note{Event: EventPermission, Badge: verdict.BadgeWaitingForPermission,
			Summary: "waiting for permission: " + nonEmpty(e.Content, e.ToolName, "a tool call") + " (kandev approve " + e.SessionID + " | kandev deny " + e.SessionID + ")"}, true
	case e.Type == eventlog.EventMarker && e.Kind == "continuation_paused":
		return Note{Event: EventPaused, Badge: verdict.BadgePaused, Summary: e.Summary}, true
	case e.Type == eventlog.EventMarker && e.Kind == "usage_limit":
		return Note{Event: EventUsageLimit, Badge: verdict.BadgeWaitingForLimit, Summary: e.Summary}, true
	case e.Type == eventlog.EventMarker && e.Kind == "wake_report":
		return Note{Event: EventWake, Badge: verdict.BadgeIdle, Summary: e.Summary}, true
	case e.Type == eventlog.EventTurnEnded && detached:
		switch e.StopReason {
		case state.StopRateLimited, eventlog.StopShutdown:
			return Note{}, false // the usage_limit marker told it; a shutdown is continued
		case eventlog.StopError, eventlog.StopProcessExit:
			return Note{Event: EventTurnFailed, Badge: verdict.BadgeIdle, Summary: fmt.Sprintf("turn %s failed (%s); kandev events %s shows why", e.TurnID, e.StopReason, e.SessionID)}, true
		}
		return Note{Event: EventTurnEnded, Badge: verdict.BadgeIdle, Summary: fmt.Sprintf("turn %s ended (%s)", e.TurnID, e.StopReason)}, true
	}
	return Note{}, false
}

func nonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
