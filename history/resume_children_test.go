package history

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestResumeContext_NamesEachChildItsTaskAndWhatCameOfIt(t *testing.T) {
	evs := []eventlog.Event{
		{Type: eventlog.EventUserMessage, Content: "fix the bug"},
		{Type: eventlog.EventChildStarted, ChildID: "c1", Data: []byte(`{"name":"scout","task":"find the bug"}`)},
		{Type: eventlog.EventChildMessage, ChildID: "c1", Content: "a long stream the fresh agent need not see"},
		{Type: eventlog.EventChildMessage, ChildID: "c1", Source: "reply", Content: "it is in lexer.go"},
		{Type: eventlog.EventChildEnded, ChildID: "c1", State: "completed"},
		{Type: eventlog.EventChildStarted, ChildID: "c2", Data: []byte(`{"name":"fixer","task":"fix it"}`)},
		{Type: eventlog.EventChildEnded, ChildID: "c2", State: "unknown"},
	}
	got := BuildResumeContext(evs, "go on", "S", 0)
	for _, want := range []string{"[SUBAGENT: scout] find the bug", "[SUBAGENT RESULT: scout] it is in lexer.go", "[SUBAGENT: fixer] fix it", "[SUBAGENT RESULT: fixer] (unknown)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the resume context lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "a long stream") {
		t.Fatalf("a child's stream in the resume context:\n%s", got)
	}
}
