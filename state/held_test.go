package state

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestHold_ChangesTheRecordAndLogsItUnderTheOwnerLock(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CreateSession(&Session{ID: "s", State: StateWaitingForInput}); err != nil {
		t.Fatal(err)
	}
	held, err := h.Hold("s", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if alive, _ := h.OwnerAlive("s"); !alive {
		t.Fatal("a held session has no live owner lock: an owner could start meanwhile")
	}
	if _, err := h.Hold("s", eventlog.OpenLogOptions{}); !isErr(err, ErrOwnerBusy) {
		t.Fatalf("a second Hold = %v, want ErrOwnerBusy", err)
	}
	s, err := held.Update(func(s *Session) error { s.State = StateCompleted; return nil })
	if err != nil || s.State != StateCompleted {
		t.Fatalf("Update = %v, %v", s, err)
	}
	if s, err := h.LoadSession(held.ID); err != nil || s.State != StateCompleted {
		t.Fatalf("Load after Update = %v, %v, want the record as written", s, err)
	}
	for _, st := range []string{StateCompleted, StateCancelled} { // the log opened once, appended twice
		if err := held.Append(&eventlog.Event{Type: eventlog.EventState, State: st}); err != nil {
			t.Fatal(err)
		}
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if alive, _ := h.OwnerAlive("s"); alive {
		t.Fatal("Release left the owner lock held")
	}
	var got []string
	if _, err := eventlog.ScanLog(h.LogPath("s"), func(e eventlog.Event) bool { got = append(got, e.State); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != StateCompleted || got[1] != StateCancelled {
		t.Fatalf("log states = %q, want the two appended, in order", got)
	}
}
