package owner

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// A record whose turn count fell behind its log (its write failed on a full
// disk after turn t3 started) counts t3 once its owner starts: the next turn
// is t4, not a second t3.
func TestFinishPending_CountsTheTurnsTheLogStarted(t *testing.T) {
	cases := []struct {
		name          string
		logged        []string // the turn ids the log started
		record, wantN int
	}{
		{"the record is right", []string{"t1", "t2"}, 2, 2},
		{"the record missed the last turn", []string{"t1", "t2", "t3"}, 2, 3},
		{"no turn yet", nil, 0, 0},
		{"the record is ahead (a rewind keeps counting)", []string{"t1"}, 4, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := state.OpenHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			log, _, err := h.OpenLog("s", eventlog.OpenLogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			for _, id := range c.logged {
				log.Append(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: id},
					&eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: id, Content: "ok"})
			}
			s := &state.Session{ID: "s", Turns: c.record}
			if err := FinishPending(h, log, s); err != nil {
				t.Fatal(err)
			}
			if s.Turns != c.wantN {
				t.Fatalf("Turns %d, want %d", s.Turns, c.wantN)
			}
		})
	}
}
