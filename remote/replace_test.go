package remote

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// turn is one finished turn's events: started, the user's text, the
// agent's answer, ended.
func turn(seq int64, id, user, agent string) []eventlog.Event {
	return []eventlog.Event{
		{Seq: seq, Type: eventlog.EventTurnStarted, TurnID: id},
		{Seq: seq + 1, Type: eventlog.EventUserMessage, TurnID: id, Content: user},
		{Seq: seq + 2, Type: eventlog.EventAgentMessage, TurnID: id, Content: agent},
		{Seq: seq + 3, Type: eventlog.EventTurnEnded, TurnID: id},
	}
}

func joined(parts ...[]eventlog.Event) []eventlog.Event {
	var out []eventlog.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestForkKeeps_OnlyAForkHoldingEveryLocalTurn(t *testing.T) {
	t1, t2 := turn(1, "t1", "remember apple", "ok"), turn(5, "t2", "remember pear", "ok")
	local := joined(t1, t2)
	marker := []eventlog.Event{{Seq: 9, Type: eventlog.EventMarker}}
	cases := []struct {
		name string
		fork []eventlog.Event
		want bool
	}{
		{"fork at the end", joined(t1, t2, marker), true},
		{"fork at the end, continued", joined(t1, t2, marker, turn(10, "t3", "more", "ok")), true},
		{"fork --at an earlier turn", joined(t1, marker), false},
		{"another copy's turn under the same id", joined(t1, turn(5, "t2", "remember plum", "ok"), marker), false},
		{"empty fork", marker, false},
	}
	for _, c := range cases {
		if got := forkKeeps(local, c.fork); got != c.want {
			t.Errorf("%s: forkKeeps = %v, want %v", c.name, got, c.want)
		}
	}
	if !forkKeeps(nil, marker) {
		t.Error("a session with no turns is kept by any fork")
	}
}

func TestOpenTurn_ATurnCutOffHereIsNamed(t *testing.T) {
	t1 := turn(1, "t1", "remember apple", "ok")
	cut := []eventlog.Event{{Seq: 5, Type: eventlog.EventTurnStarted, TurnID: "t2"}, {Seq: 6, Type: eventlog.EventUserMessage, TurnID: "t2", Content: "remember pear"}}
	if got := openTurn(t1); got != "" {
		t.Errorf("a log of finished turns: open turn %q", got)
	}
	if got := openTurn(joined(t1, cut)); got != "t2" {
		t.Errorf("a log cut off in t2: open turn %q", got)
	}
	if got := openTurn(nil); got != "" {
		t.Errorf("an empty log: open turn %q", got)
	}
}
