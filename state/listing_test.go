package state

import (
	"slices"
	"testing"
)

// A listing that refuses some states passes over those records without
// decoding them whole, and reports the same records as unreadable or newer
// as a listing of everything does: a record is passed over only when its
// state, read alone, is what decoding it whole would find.
func TestListSessionsWhere_PassesOverRefusedStatesAndReportsTheSameProblems(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	records := map[string]string{
		"live":       `{"format":3,"id":"live","state":"WAITING_FOR_INPUT","last_activity_at":"2026-01-02T00:00:00Z"}`,
		"done":       `{"format":3,"id":"done","state":"COMPLETED"}`,
		"old-done":   `{"format":0,"id":"old-done","state":"CANCELLED"}`,
		"newer-done": `{"format":99,"id":"newer-done","state":"COMPLETED"}`,
		"torn-done":  `{"format":3,"id":"torn-done","state":"COMPLETED","title":"cut`,
		"wrong-id":   `{"format":3,"id":"other","state":"COMPLETED"}`,
		// decoded whole, the last state key wins: it is a live session
		"twice":   `{"format":3,"id":"twice","state":"COMPLETED","state":"RUNNING","last_activity_at":"2026-01-01T00:00:00Z"}`,
		"escaped": `{"format":3,"id":"escaped","state":"COMPLETE\u0044"}`,
	}
	for id, body := range records {
		writeRecord(t, h, id, body)
	}
	terminal := func(st string) bool { return !IsTerminal(st) }
	all, allRep, err := h.listSessionsReport()
	if err != nil {
		t.Fatal(err)
	}
	live, liveRep, err := h.ListSessionsWhere(terminal)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range live {
		ids = append(ids, s.ID)
	}
	if want := []string{"live", "twice"}; !sameSet(ids, want) {
		t.Errorf("kept %v, want %v", ids, want)
	}
	if len(all) != 5 { // live, done, old-done, twice, escaped
		t.Errorf("the unfiltered listing read %d sessions", len(all))
	}
	if liveRep.Newer != allRep.Newer || liveRep.Newer != 1 || len(liveRep.Unreadable) != len(allRep.Unreadable) || len(liveRep.Unreadable) != 2 {
		t.Errorf("report filtered %+v, unfiltered %+v", liveRep, allRep)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
