package owner

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestNoteChildren_CountsEachChildIdOnceAnnouncedOrNot(t *testing.T) {
	ev := func(typ, child string) *eventlog.Event { return &eventlog.Event{Type: typ, ChildID: child} }
	cases := []struct {
		name  string
		known []string
		evs   []*eventlog.Event
		want  int
	}{
		{"a turn without children counts none", nil, []*eventlog.Event{ev(eventlog.EventAgentMessage, "")}, 0},
		{"an announced child counts once, its stream not again", nil,
			[]*eventlog.Event{ev(eventlog.EventChildStarted, "C"), ev(eventlog.EventChildMessage, "C"), ev(eventlog.EventChildEnded, "C")}, 1},
		{"a child never announced counts", nil, []*eventlog.Event{ev(eventlog.EventChildMessage, "X")}, 1},
		{"an end for a child never announced counts", nil, []*eventlog.Event{ev(eventlog.EventChildEnded, "X")}, 1},
		{"a reused id is one child", nil, []*eventlog.Event{ev(eventlog.EventChildStarted, "C"), ev(eventlog.EventChildStarted, "C")}, 1},
		{"a child the log has already counts no more", []string{"C"}, []*eventlog.Event{ev(eventlog.EventChildMessage, "C")}, 0},
		{"two children interleaved count two", nil,
			[]*eventlog.Event{ev(eventlog.EventChildMessage, "A"), ev(eventlog.EventChildMessage, "B"), ev(eventlog.EventChildMessage, "A")}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, id := range c.known {
				seen[id] = true
			}
			if got := noteChildren(seen, c.evs); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestNoteChildren_KeepsWhichChildrenMayStillRun(t *testing.T) {
	ev := func(typ, child string) *eventlog.Event { return &eventlog.Event{Type: typ, ChildID: child} }
	kids := map[string]bool{"old": false}
	noteChildren(kids, []*eventlog.Event{
		ev(eventlog.EventChildStarted, "a"), ev(eventlog.EventChildMessage, "a"), ev(eventlog.EventChildEnded, "a"),
		ev(eventlog.EventChildStarted, "b"), ev(eventlog.EventChildMessage, "x"),
		ev(eventlog.EventChildUpdate, "old"),
	})
	want := map[string]bool{"a": false, "b": true, "x": true, "old": true}
	for id, runs := range want {
		if kids[id] != runs {
			t.Fatalf("%s may run %v, want %v (%v)", id, kids[id], runs, kids)
		}
	}
}
