package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestOpenLog_AHostileSeqOnTheLastLineNeitherRepeatsNorOverflowsTheNumbering(t *testing.T) {
	for _, seq := range []string{"-1", "0", "9223372036854775807", "9007199254740992", "11.5", "1e3", `"12"`} {
		t.Run(seq, func(t *testing.T) {
			h, err := OpenHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			hostile := fmt.Sprintf(`{"seq":%s,"type":"agent_message","session_id":"s1","content":"pasted"}`+"\n", seq)
			var log bytes.Buffer
			for i := 1; i <= 3; i++ {
				fmt.Fprintf(&log, `{"seq":%d,"type":"state","session_id":"s1","state":"RUNNING"}`+"\n", i)
			}
			log.WriteString(hostile)
			os.WriteFile(h.LogPath("s1"), log.Bytes(), 0o600)

			l, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Append(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: "t1"}, &eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1"}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			evs, rep, err := eventlog.ReadAll(h.LogPath("s1"))
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, e := range evs {
				got = append(got, e.Seq)
			}
			if fmt.Sprint(got) != "[1 2 3 4 5]" {
				t.Fatalf("seqs %v, want 1 to 5: the new turn numbered on from the last readable event", got)
			}
			p := rep.Problems()
			if len(rep.CorruptLines) != 1 || !strings.Contains(p, "after seq 3") || !strings.Contains(p, "kandev doctor") {
				t.Fatalf("the hostile line must be reported, named by the seq before it: %q", p)
			}
			if b, _ := os.ReadFile(h.LogPath("s1")); !bytes.Contains(b, []byte(hostile)) {
				t.Fatal("the hostile line was lost: a log is never rewritten")
			}
			health, err := eventlog.InspectLog(h.LogPath("s1"))
			if err != nil || len(health.CorruptLines) != 1 || health.CorruptAfter[0] != 3 || len(health.SeqFaults) != 0 || health.SeqGaps != 0 || health.Events != 5 {
				t.Fatalf("doctor's reading: %+v, %v", health, err)
			}
		})
	}
}

func TestReadBackward_ReportsACorruptLineInTheMiddleByTheSeqBeforeIt(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lines := `{"seq":1,"type":"state","session_id":"s1"}` + "\n" + `{"seq":2,"type":"state","session_id":"s1"}` + "\n" +
		"{not json\n" + `{"seq":3,"type":"state","session_id":"s1"}` + "\n"
	os.WriteFile(h.LogPath("s1"), []byte(lines), 0o600)
	want := int64(len(lines) - len(`{"seq":3,"type":"state","session_id":"s1"}`+"\n") - len("{not json\n"))
	for name, read := range map[string]func() (eventlog.ReadReport, error){
		"ReadLast": func() (eventlog.ReadReport, error) {
			_, rep, err := eventlog.ReadLast(h.LogPath("s1"), 10, nil)
			return rep, err
		},
		"ScanEventsBackward": func() (eventlog.ReadReport, error) {
			return eventlog.ScanEventsBackward(h.LogPath("s1"), func(eventlog.Event, []byte) bool { return true })
		},
	} {
		rep, err := read()
		if err != nil || len(rep.CorruptLines) != 1 || rep.CorruptLines[0] != want || rep.CorruptAfter[0] != 2 {
			t.Fatalf("%s: %+v %v, want the line at byte %d after seq 2", name, rep, err, want)
		}
		if p := rep.Problems(); !strings.Contains(p, fmt.Sprintf("after seq 2, at byte %d", want)) || !strings.Contains(p, "kandev doctor") {
			t.Fatalf("%s: %q", name, p)
		}
	}
}

func TestCheckNesting(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"a record", `{"id":"s1","worktree":{"path":"/x"},"usage":{"cost":{"amount":1}}}`, true},
		{"64 levels", `{"x":` + deep(63) + `}`, true},
		{"65 levels", `{"x":` + deep(64) + `}`, false},
		{"brackets in a string do not nest", `{"x":"` + deep(500) + `"}`, true},
		{"an escaped quote does not end the string", `{"x":"\"` + deep(500) + `"}`, true},
		{"many siblings are not depth", `{"x":[` + strings.Repeat("{},", 500) + `{}]}`, true},
	}
	for _, tc := range cases {
		if err := CheckNesting([]byte(tc.doc)); (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// An unknown field nested deep is refused with one line that names the
// record and kandev doctor; every writer returns that error (none panics)
// and the file stays as it was.
func TestLoadSession_ARecordNestedTooDeepIsRefusedAndLeftAsItIs(t *testing.T) {
	for _, depth := range []int{5000, 100000} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			h, err := OpenHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			rec := `{"format":3,"id":"s1","state":"WAITING_FOR_INPUT","from_the_future":` +
				strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}\n"
			os.WriteFile(h.RecordPath("s1"), []byte(rec), 0o600)
			_, err = h.LoadSession("s1")
			msg := fmt.Sprint(err)
			if !errors.Is(err, ErrTooDeep) || !strings.Contains(msg, h.RecordPath("s1")) || !strings.Contains(msg, "kandev doctor") || strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Fatalf("got %q", msg)
			}
			if _, err := h.UpdateSession("s1", func(s *Session) error { s.Title = "x"; return nil }); !errors.Is(err, ErrTooDeep) {
				t.Fatalf("a writer used the record: %v", err)
			}
			if b, _ := os.ReadFile(h.RecordPath("s1")); string(b) != rec {
				t.Fatal("the record was changed")
			}
		})
	}
}

func TestUpdateSession_AnUnknownFieldNestedWithinTheLimitSurvivesARewrite(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nested := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	os.WriteFile(h.RecordPath("s1"), []byte(`{"format":3,"id":"s1","from_the_future":`+nested+`}`), 0o600)
	if _, err := h.UpdateSession("s1", func(s *Session) error { s.Title = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := h.LoadSession("s1")
	if err != nil || s.Title != "x" || strings.Join(strings.Fields(string(s.Unknown["from_the_future"])), "") != nested {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestOffsetAfterSeq_PassesOverALineWithAHostileSeq(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	one := `{"seq":1,"type":"state","session_id":"s1"}` + "\n"
	hostile := `{"seq":9223372036854775807,"type":"state","session_id":"s1"}` + "\n"
	two := `{"seq":2,"type":"state","session_id":"s1"}` + "\n"
	os.WriteFile(h.LogPath("s1"), []byte(one+hostile+two), 0o600)
	if off, err := eventlog.OffsetAfterSeq(h.LogPath("s1"), 2); err != nil || off != int64(len(one+hostile+two)) {
		t.Fatalf("offset after seq 2 = %d, %v; want %d", off, err, len(one+hostile+two))
	}
	if off, _ := eventlog.OffsetAfterSeq(h.LogPath("s1"), 1); off != int64(len(one)) {
		t.Fatalf("offset after seq 1 = %d", off)
	}
}

func TestLoadSession_ACorruptRecordPointsAtDoctor(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{`{"id": broken`, `[1,2]`, `{"id":"s1","turns":"many"}`} {
		os.WriteFile(h.RecordPath("s1"), []byte(rec), 0o600)
		_, err := h.LoadSession("s1")
		if msg := fmt.Sprint(err); !strings.Contains(msg, "session record "+h.RecordPath("s1")+" is corrupt: ") || !strings.HasSuffix(msg, "; run kandev doctor") || strings.Contains(msg, "\n") {
			t.Errorf("%s: got %q", rec, msg)
		}
	}
}
