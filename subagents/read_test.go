package subagents

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// FromLog reads a child's chunks for their count alone: what it reads
// must be what Summarize makes of the whole events.
func TestFromLog_IsSummarizeOfTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l, _, err := eventlog.Open(path, "s", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(child, role, text string) eventlog.Event {
		return ev(eventlog.EventChildMessage, child, func(e *eventlog.Event) { e.Role, e.Content = role, text })
	}
	evs := []eventlog.Event{
		started("a", "scout"), msg("a", "user", "look"), msg("a", "assistant", "one "), msg("a", "assistant", "two"),
		ev(eventlog.EventChildThought, "a", func(e *eventlog.Event) { e.Content = "hmm" }), msg("a", "assistant", "three"),
		ev(eventlog.EventChildToolCall, "a", func(e *eventlog.Event) { e.ToolCallID, e.ToolName, e.ToolKind = "c1", "Write", "edit" }),
		ev(eventlog.EventChildToolResult, "a", func(e *eventlog.Event) { e.ToolCallID, e.ToolStatus = "c1", "completed" }),
		msg("x", "assistant", "a stranger"), {Type: eventlog.EventAgentMessage, Role: "assistant", Content: "the parent"},
		ev(eventlog.EventChildEnded, "a", func(e *eventlog.Event) { e.State = Completed }),
	}
	for i := range evs {
		if err := l.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	all, _, err := eventlog.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := Summarize(all); !reflect.DeepEqual(got, want) {
		t.Fatalf("FromLog\n%+v\nSummarize\n%+v", got, want)
	}
	if len(got) != 2 || got[0].Messages != 2 || got[0].Prompt != "look" || len(got[0].Calls) != 1 || got[1].ID != "x" {
		t.Fatalf("children %+v", got)
	}
}
