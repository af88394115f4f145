package subagents

import (
	"errors"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func ev(typ, child string, f func(e *eventlog.Event)) eventlog.Event {
	e := eventlog.Event{Type: typ, ChildID: child, TurnID: "t1"}
	if f != nil {
		f(&e)
	}
	return e
}

func started(child, name string) eventlog.Event {
	return ev(eventlog.EventChildStarted, child, func(e *eventlog.Event) {
		e.Data = []byte(`{"name":"` + name + `","task":"look around","kind":"subagent"}`)
	})
}

func TestSummarize(t *testing.T) {
	ended := func(child, state string) eventlog.Event {
		return ev(eventlog.EventChildEnded, child, func(e *eventlog.Event) { e.State = state })
	}
	cases := []struct {
		name   string
		events []eventlog.Event
		want   string // id:state, in order
	}{
		{"no children", []eventlog.Event{{Type: eventlog.EventAgentMessage}}, ""},
		{"a child without a recorded end is running", []eventlog.Event{started("a", "scout")}, "a:running"},
		{"a recorded end is its state", []eventlog.Event{started("a", "scout"), ended("a", Completed)}, "a:completed"},
		{"a repair's unknown stays unknown", []eventlog.Event{started("a", "scout"), ended("a", Unknown)}, "a:unknown"},
		{"children keep the order they started in", []eventlog.Event{started("b", "x"), started("a", "y"), ended("b", Failed)}, "b:failed a:running"},
		{"an idle child given work again runs", []eventlog.Event{started("a", "scout"), ended("a", Completed),
			ev(eventlog.EventChildUpdate, "a", func(e *eventlog.Event) {
				e.Data = []byte(`{"sessionUpdate":"subagent_update","sessionId":"a","state":{"state":"running"}}`)
			})}, "a:running"},
		{"a stream without an announcement is still listed", []eventlog.Event{ev(eventlog.EventChildMessage, "z", nil)}, "z:running"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range Summarize(c.events) {
				got = append(got, ch.ID+":"+ch.State)
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("got %q, want %q", strings.Join(got, " "), c.want)
			}
		})
	}
}

func TestSummarize_ACancelOfferedAfterTheAnnouncementCounts(t *testing.T) {
	caps := func(cancel string) eventlog.Event {
		return ev(eventlog.EventChildUpdate, "a", func(e *eventlog.Event) {
			e.Data = []byte(`{"sessionUpdate":"subagent_update","sessionId":"a","capabilities":{"cancel":` + cancel + `}}`)
		})
	}
	for _, c := range []struct {
		name   string
		events []eventlog.Event
		want   bool
	}{
		{"not offered at the announcement", []eventlog.Event{started("a", "scout")}, false},
		{"offered in a later update", []eventlog.Event{started("a", "scout"), caps(`{}`)}, true},
		{"withdrawn with a null", []eventlog.Event{started("a", "scout"), caps(`{}`), caps(`null`)}, false},
		{"an update without capabilities changes nothing", []eventlog.Event{started("a", "scout"), caps(`{}`),
			ev(eventlog.EventChildUpdate, "a", func(e *eventlog.Event) {
				e.Data = []byte(`{"sessionUpdate":"subagent_update","sessionId":"a","cwd":"/x"}`)
			})}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Summarize(c.events)[0].CanCancel; got != c.want {
				t.Fatalf("can_cancel %v, want %v", got, c.want)
			}
		})
	}
}

func TestSummarize_PromptCallsAndLink(t *testing.T) {
	evs := []eventlog.Event{
		started("a", "scout"),
		ev(eventlog.EventChildMessage, "a", func(e *eventlog.Event) { e.Role, e.Content, e.ToolCallID = "user", "write the file", "toolu_1" }),
		ev(eventlog.EventChildToolCall, "a", func(e *eventlog.Event) { e.ToolCallID, e.ToolName, e.ToolKind = "call-1", "Write a.txt", "edit" }),
		ev(eventlog.EventChildToolResult, "a", func(e *eventlog.Event) { e.ToolCallID, e.ToolStatus = "call-1", "completed" }),
		ev(eventlog.EventChildMessage, "a", func(e *eventlog.Event) { e.Role, e.Content = "assistant", "done" }),
	}
	c := Summarize(evs)[0]
	if c.Name != "scout" || c.Task != "look around" || c.Prompt != "write the file" || c.ToolCallID != "toolu_1" || c.Messages != 1 {
		t.Fatalf("child %+v", c)
	}
	if len(c.Calls) != 1 || c.Calls[0].Status != "completed" || c.Calls[0].Kind != "edit" || c.Calls[0].Name != "Write a.txt" {
		t.Fatalf("calls %+v", c.Calls)
	}
}

func TestContinuationNote_NamesEachUnknownChildItsTaskAndSideEffects(t *testing.T) {
	kids := []Child{{ID: "sub-1", Name: "scout", Task: "look around", State: Unknown, Calls: []Call{
		{ID: "call-1", Name: "Read a.txt", Kind: "read", Status: "completed"},
		{ID: "call-2", Name: "Write b.txt", Kind: "edit", Status: "pending", Input: []byte(`{"path": "b.txt"}`)},
	}}}
	note := ContinuationNote(kids)
	for _, want := range []string{`subagent "scout" (id sub-1): look around`, "Write b.txt (id call-2, pending)", `{"path":"b.txt"}`, "check what their side-effecting tool calls already did"} {
		if !strings.Contains(note, want) {
			t.Fatalf("note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "Read a.txt") {
		t.Fatalf("a read is no side effect:\n%s", note)
	}
	if ContinuationNote(nil) != "" {
		t.Fatal("a note without children")
	}
}

func TestContinuationNote_IsBounded(t *testing.T) {
	var kids []Child
	for i := 0; i < 100; i++ {
		kids = append(kids, Child{ID: "c", Task: strings.Repeat("x", 10000), State: Unknown})
	}
	if n := len(ContinuationNote(kids)); n > 10000 {
		t.Fatalf("note of %d bytes", n)
	}
}

func TestCancellable(t *testing.T) {
	kids := []Child{{ID: "a", CanCancel: true, State: Running}, {ID: "b", State: Running}, {ID: "c", CanCancel: true, State: Completed}}
	cases := []struct {
		id   string
		want error
	}{{"a", nil}, {"b", ErrNoChildCancel}, {"c", ErrNoChildCancel}, {"z", ErrNoChild}}
	for _, c := range cases {
		if _, err := Cancellable(kids, c.id); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.id, err, c.want)
		}
	}
}
