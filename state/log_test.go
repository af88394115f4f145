package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

func newLog(t testing.TB) (*Home, *eventlog.EventLog) {
	t.Helper()
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() }) // an open file keeps its directory from being removed on Windows
	return h, l
}

func TestEventLog_AssignsSeqWithoutGapsAcrossReopen(t *testing.T) {
	h, l := newLog(t)
	for i := 0; i < 3; i++ {
		if err := l.Append(&eventlog.Event{Type: eventlog.EventAgentMessage, Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l2, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.AppendSync(&eventlog.Event{Type: eventlog.EventTurnEnded}, &eventlog.Event{Type: eventlog.EventState}); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	evs, rep, err := eventlog.ReadAll(h.LogPath("s1"))
	if err != nil || rep.Problems() != "" {
		t.Fatal(err, rep)
	}
	if len(evs) != 5 {
		t.Fatalf("got %d events", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.SessionID != "s1" || e.Timestamp == "" {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
}

func TestEventLog_FilesArePrivate(t *testing.T) {
	skipOnWindows(t, "it has no unix mode bits; the home is private by the user profile's access list")
	h, l := newLog(t)
	l.AppendSync(&eventlog.Event{Type: eventlog.EventState})
	l.Close()
	st, _ := os.Stat(h.LogPath("s1"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("log mode %v", st.Mode().Perm())
	}
	st, _ = os.Stat(filepath.Join(h.Dir, "sessions"))
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("sessions dir mode %v", st.Mode().Perm())
	}
}

func TestReaders_SkipAndReportTornLastLine(t *testing.T) {
	h, l := newLog(t)
	l.Append(&eventlog.Event{Type: eventlog.EventState}, &eventlog.Event{Type: eventlog.EventState})
	l.Close()
	f, _ := os.OpenFile(h.LogPath("s1"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":3,"type":"sta`)
	f.Close()

	evs, rep, err := eventlog.ReadAll(h.LogPath("s1"))
	if err != nil || len(evs) != 2 || rep.TornBytes != int64(len(`{"seq":3,"type":"sta`)) {
		t.Fatalf("forward: %d events, report %+v, err %v", len(evs), rep, err)
	}
	last, rep, err := eventlog.ReadLast(h.LogPath("s1"), 10, nil)
	if err != nil || len(last) != 2 || rep.TornBytes == 0 {
		t.Fatalf("backward: %d events, report %+v, err %v", len(last), rep, err)
	}
	// The owner truncates it on open and continues the sequence.
	l2, torn, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil || torn == 0 {
		t.Fatalf("torn=%d err=%v", torn, err)
	}
	l2.Append(&eventlog.Event{Type: eventlog.EventState})
	l2.Close()
	evs, rep, _ = eventlog.ReadAll(h.LogPath("s1"))
	if len(evs) != 3 || evs[2].Seq != 3 || rep.Problems() != "" {
		t.Fatalf("after reopen: %+v %+v", evs, rep)
	}
}

func TestReaders_SkipAndReportGarbageInTheMiddle(t *testing.T) {
	h, l := newLog(t)
	l.Append(&eventlog.Event{Type: eventlog.EventState})
	l.Close()
	f, _ := os.OpenFile(h.LogPath("s1"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("this is not json\n")
	f.Close()
	l2, _, _ := h.OpenLog("s1", eventlog.OpenLogOptions{})
	l2.Append(&eventlog.Event{Type: eventlog.EventState})
	l2.Close()
	evs, rep, err := eventlog.ReadAll(h.LogPath("s1"))
	if err != nil || len(evs) != 2 || len(rep.CorruptLines) != 1 || evs[1].Seq != 2 {
		t.Fatalf("%d events, report %+v, err %v", len(evs), rep, err)
	}
	last, _, _ := eventlog.ReadLast(h.LogPath("s1"), 5, nil)
	if len(last) != 2 || last[0].Seq != 1 || last[1].Seq != 2 {
		t.Fatalf("backward: %+v", last)
	}
}

func TestScanBackward_MatchesForwardOrderAcrossChunks(t *testing.T) {
	h, l := newLog(t)
	// Lines of varied length, some longer than a read chunk.
	for i := 0; i < 500; i++ {
		l.Append(&eventlog.Event{Type: eventlog.EventAgentMessage, Content: strings.Repeat("x", (i*977)%(3*backChunk/2))})
	}
	l.Close()
	fwd, _, _ := eventlog.ReadAll(h.LogPath("s1"))
	back, _, _ := eventlog.ReadLast(h.LogPath("s1"), 1<<30, nil)
	if len(fwd) != 500 || len(back) != 500 {
		t.Fatalf("fwd %d back %d", len(fwd), len(back))
	}
	for i := range fwd {
		if fwd[i].Seq != back[i].Seq || fwd[i].Content != back[i].Content {
			t.Fatalf("mismatch at %d", i)
		}
	}
}

func TestValidateID_RejectsPathsAndDots(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"20261130-052209-ab12cd34", true},
		{"abc", true},
		{"../x", false},
		{"a/b", false},
		{`a\b`, false},
		{"..", false},
		{"", false},
		{"a b", false},
	} {
		if err := ValidateID(tc.id); (err == nil) != tc.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestResolveID_UniquePrefixAmbiguityAndMissing(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	for _, id := range []string{"abc-1", "abc-2", "xyz-1"} {
		if err := h.CreateSession(&Session{ID: id, State: StateCreated}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := h.ResolveID("xy"); err != nil || id != "xyz-1" {
		t.Fatalf("prefix: %q %v", id, err)
	}
	if id, err := h.ResolveID("abc-1"); err != nil || id != "abc-1" {
		t.Fatalf("exact: %q %v", id, err)
	}
	if _, err := h.ResolveID("abc"); !isErr(err, ErrAmbiguous) {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := h.ResolveID("nope"); !isErr(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestWriteFileAtomic_LeavesOldOrNewRecord(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	h.CreateSession(&Session{ID: "s", State: StateCreated, Title: "old"})
	if _, err := h.UpdateSession("s", func(s *Session) error { s.Title = "new"; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := h.LoadSession("s")
	if err != nil || s.Title != "new" || s.TaskState != "TODO" {
		t.Fatalf("%+v %v", s, err)
	}
	// No temp files are left behind.
	m, _ := filepath.Glob(filepath.Join(h.Dir, "sessions", ".*tmp*"))
	if len(m) != 0 {
		t.Fatalf("leftover temp files %v", m)
	}
}

func TestOwner_OnlyOneOwnerPerSession(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	o, err := h.AcquireOwner("s")
	if err != nil {
		t.Fatal(err)
	}
	if alive, _ := h.OwnerAlive("s"); !alive {
		t.Fatal("probe says no owner while one holds the lock")
	}
	if _, err := h.AcquireOwner("s"); !isOwnerBusy(err) {
		t.Fatalf("second owner: %v", err)
	}
	o.Release()
	if alive, _ := h.OwnerAlive("s"); alive {
		t.Fatal("probe says owner alive after release")
	}
	if o, err := h.AcquireOwner("s"); err != nil { // the probe let go of the lock it took
		t.Fatalf("owner after a probe: %v", err)
	} else {
		o.Release()
	}
}

func TestListSessions_IgnoresLeaseAndTempFiles(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	h.CreateSession(&Session{ID: "s1", State: StateWaitingForInput})
	if _, err := h.Attach("s1", "a", time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	all, err := h.ListSessions()
	if err != nil || len(all) != 1 || all[0].ID != "s1" {
		t.Fatalf("%d sessions: %+v %v", len(all), all, err)
	}
	if id, err := h.ResolveID("s"); err != nil || id != "s1" {
		t.Fatalf("prefix with a lease file beside it: %q %v", id, err)
	}
}

func TestTurnClosed_ATurnEndedByShutdownStillAwaitsItsContinuation(t *testing.T) {
	cases := []struct {
		stop   string
		closed bool
	}{
		{eventlog.StopEndTurn, true},
		{eventlog.StopCancelled, true},
		{eventlog.StopUserCanceled, true},
		{eventlog.StopShutdown, false},
	}
	for _, tc := range cases {
		h, log := newLog(t)
		log.Append(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: "t1"}, &eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: tc.stop})
		if got := eventlog.TurnClosed(h.LogPath("s1"), "t1"); got != tc.closed {
			t.Errorf("turn ended %s: closed %v, want %v", tc.stop, got, tc.closed)
		}
	}
}

func TestTurnClosed_ATurnThatNeverReachedTheLogIsNothingToResume(t *testing.T) {
	cases := []struct {
		name   string
		events []*eventlog.Event
		closed bool
	}{
		{"empty log", nil, true},
		{"only an earlier turn", []*eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: "t1"}, {Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopEndTurn}}, true},
		{"an earlier turn cut off", []*eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: "t1"}, {Type: eventlog.EventAgentMessage, TurnID: "t1"}}, true},
		{"the turn started", []*eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: "t2"}}, false},
		{"the turn streamed", []*eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: "t2"}, {Type: eventlog.EventAgentMessage, TurnID: "t2"}, {Type: eventlog.EventState, State: StateRunning}}, false},
	}
	for _, tc := range cases {
		h, log := newLog(t)
		if len(tc.events) > 0 {
			if err := log.Append(tc.events...); err != nil {
				t.Fatal(err)
			}
		}
		if got := eventlog.TurnClosed(h.LogPath("s1"), "t2"); got != tc.closed {
			t.Errorf("%s: closed %v, want %v", tc.name, got, tc.closed)
		}
	}
}

func TestTurnClosed_AStateEventAfterTurnEndedStillReadsAsClosed(t *testing.T) {
	h, log := newLog(t)
	log.Append(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: "t1"}, &eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1"},
		&eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopEndTurn}, &eventlog.Event{Type: eventlog.EventState, TurnID: "t1", State: StateWaitingForInput})
	if !eventlog.TurnClosed(h.LogPath("s1"), "t1") {
		t.Fatal("a turn whose turn_ended is followed by its state event reads as open")
	}
}
