package subagents

import (
	"errors"

	"github.com/kandev/kandev/eventlog"
)

// Stream is child id's stream as a conversation of its own: its prompt as
// a user message, its messages, thoughts and tool calls as the parent's
// types, its end as a marker; so that one child reads as a transcript.
func Stream(events []eventlog.Event, id string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range events {
		if e.ChildID != id {
			continue
		}
		e.ChildID = ""
		switch e.Type {
		case eventlog.EventChildMessage:
			e.Type = eventlog.EventAgentMessage
			if e.Role == "user" {
				e.Type = eventlog.EventUserMessage
			} else if e.Source == "reply" {
				continue // the answer is already in its stream
			}
			e.Source = ""
		case eventlog.EventChildThought:
			e.Type = eventlog.EventAgentThought
		case eventlog.EventChildToolCall:
			e.Type = eventlog.EventToolCall
		case eventlog.EventChildToolResult:
			e.Type = eventlog.EventToolResult
		case eventlog.EventChildEnded:
			summary := "The child ended: " + e.State
			if e.Summary != "" {
				summary += " (" + e.Summary + ")"
			}
			e.Type, e.Kind, e.Severity, e.Summary = eventlog.EventMarker, "subagent_ended", "info", summary
		default:
			continue
		}
		out = append(out, e)
	}
	return out
}

// EventsFromLog reads the events of child id from the log at path.
func EventsFromLog(path, id string) ([]eventlog.Event, error) {
	var evs []eventlog.Event
	_, err := eventlog.ScanLines(path, func(line []byte) bool {
		if e, ok := decodeChild(line); ok && e.ChildID == id {
			evs = append(evs, e)
		}
		return true
	})
	if errors.Is(err, eventlog.ErrNotFound) {
		err = nil
	}
	return evs, err
}
