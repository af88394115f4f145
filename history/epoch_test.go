package history

import (
	"slices"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// turnLog builds a log from a compact script: "T" a whole turn (turn_started,
// user_message, agent_message, turn_ended), "R<n>" a rewind to seq n, "E" an
// edit tool call, "S" a state event.
func turnLog(script ...string) []eventlog.Event {
	var evs []eventlog.Event
	add := func(e eventlog.Event) {
		e.Seq = int64(len(evs) + 1)
		evs = append(evs, e)
	}
	epoch := 0
	for _, s := range script {
		switch s[0] {
		case 'T':
			add(eventlog.Event{Type: eventlog.EventTurnStarted})
			add(eventlog.Event{Type: eventlog.EventUserMessage, Content: "u"})
			add(eventlog.Event{Type: eventlog.EventAgentMessage, Content: "a"})
			add(eventlog.Event{Type: eventlog.EventTurnEnded})
		case 'R':
			var to int64
			for _, c := range s[1:] {
				to = to*10 + int64(c-'0')
			}
			epoch++
			add(eventlog.Event{Type: eventlog.EventRewind, Epoch: epoch, ToSeq: &to})
		case 'E':
			add(eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "c", ToolKind: "edit"})
		case 'S':
			add(eventlog.Event{Type: eventlog.EventState})
		}
	}
	return evs
}

func seqs(evs []eventlog.Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestCurrentEpoch_ShowsWhatTheLastRewindsKept(t *testing.T) {
	cases := []struct {
		name   string
		script []string
		want   []int64
	}{
		{"no rewind: everything", []string{"T", "T"}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"rewind to the first turn's end hides the second", []string{"T", "T", "R4", "T"}, []int64{1, 2, 3, 4, 9, 10, 11, 12, 13}},
		{"clear hides everything before it", []string{"T", "T", "R0", "T"}, []int64{9, 10, 11, 12, 13}},
		{"a rewind within the new epoch keeps the older fence", []string{"T", "T", "R4", "T", "R13", "T"}, []int64{1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}},
		{"a rewind past an older fence hides that fence too", []string{"T", "T", "R4", "T", "R0", "T"}, []int64{14, 15, 16, 17, 18}},
		{"rewind to the end hides nothing", []string{"T", "R4"}, []int64{1, 2, 3, 4, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := seqs(CurrentEpoch(turnLog(c.script...))); !slices.Equal(got, c.want) {
				t.Fatalf("visible seqs = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCheckBoundary_NamesTheNearestTurnEnds(t *testing.T) {
	bounds := Boundaries(CurrentEpoch(turnLog("T", "T", "T")))
	if !slices.Equal(bounds, []int64{0, 4, 8, 12}) {
		t.Fatalf("boundaries = %v", bounds)
	}
	cases := []struct {
		seq           int64
		ok            bool
		before, after int64
	}{
		{0, true, 0, 0},
		{8, true, 8, 8},
		{6, false, 4, 8},
		{1, false, 0, 4},
		{99, false, 12, -1},
	}
	for _, c := range cases {
		ok, before, after := CheckBoundary(bounds, c.seq)
		if ok != c.ok || before != c.before || after != c.after {
			t.Errorf("CheckBoundary(%d) = %v %d %d, want %v %d %d", c.seq, ok, before, after, c.ok, c.before, c.after)
		}
	}
}

func TestFileChanges_ListsEditsAfterTheCutOnce(t *testing.T) {
	evs := turnLog("T", "E", "T", "E", "E")
	cases := []struct {
		after int64
		want  []int64
	}{
		{0, []int64{5, 10}}, // seq 11 is call d again: listed once
		{4, []int64{5, 10}},
		{5, []int64{10}},
		{11, nil},
	}
	evs[9].ToolCallID, evs[10].ToolCallID = "d", "d"
	for _, c := range cases {
		got := FileChanges(evs, c.after)
		if c.want == nil && len(got) != 0 || c.want != nil && !slices.Equal(seqs(got), c.want) {
			t.Errorf("FileChanges after %d = %v, want %v", c.after, seqs(got), c.want)
		}
	}
}

func TestForkHistory_KeepsTheConversationUpToTheCut(t *testing.T) {
	evs := turnLog("T", "S", "T", "S")
	got := ForkHistory(evs, 9)
	if want := []int64{1, 2, 3, 4, 6, 7, 8, 9}; !slices.Equal(seqs(got), want) {
		t.Fatalf("fork history = %v, want %v (no state events, nothing after the cut)", seqs(got), want)
	}
}

func TestFileChanges_ADeniedWriteNeverRanAndIsNotListed(t *testing.T) {
	call := func(seq int64, id string) eventlog.Event {
		return eventlog.Event{Seq: seq, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: id, ToolKind: "edit"}
	}
	answer := func(seq int64, id, data string) eventlog.Event {
		return eventlog.Event{Seq: seq, Type: eventlog.EventPermissionResolved, TurnID: "t1", ToolCallID: id, Data: []byte(data)}
	}
	cases := []struct {
		name string
		evs  []eventlog.Event
		want []int64
	}{
		{"allowed", []eventlog.Event{call(1, "a"), answer(2, "a", `{"allowed":true}`)}, []int64{1}},
		{"denied", []eventlog.Event{call(1, "a"), answer(2, "a", `{"allowed":false,"outcome":"selected"}`)}, nil},
		{"denied, then allowed when asked again", []eventlog.Event{call(1, "a"), answer(2, "a", `{"allowed":false}`), answer(3, "a", `{"allowed":true}`)}, []int64{1}},
		{"no permission asked", []eventlog.Event{call(1, "a")}, []int64{1}},
		{"an unreadable answer counts as a change", []eventlog.Event{call(1, "a"), answer(2, "a", `not json`)}, []int64{1}},
		{"only the denied call drops", []eventlog.Event{call(1, "a"), answer(2, "a", `{"allowed":false}`), call(3, "b")}, []int64{3}},
	}
	for _, c := range cases {
		got := FileChanges(c.evs, 0)
		if c.want == nil && len(got) != 0 || c.want != nil && !slices.Equal(seqs(got), c.want) {
			t.Errorf("%s: FileChanges = %v, want %v", c.name, seqs(got), c.want)
		}
	}
}
