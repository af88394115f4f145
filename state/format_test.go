package state

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestOpenHome_WritesItsFormatOnFirstUsePrivately(t *testing.T) {
	skipOnWindows(t, "it has no unix mode bits; the home is private by the user profile's access list")
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(h.FormatPath())
	if err != nil || string(b) != strconv.Itoa(Format)+"\n" {
		t.Fatalf("format file %q, %v", b, err)
	}
	if st, _ := os.Stat(h.FormatPath()); st.Mode().Perm() != 0o600 {
		t.Fatalf("format file is %04o", st.Mode().Perm())
	}
	if n, err := h.HomeFormat(); n != Format || err != nil {
		t.Fatalf("HomeFormat = %d, %v", n, err)
	}
}

func TestOpenHome_HomeWithoutFormatFileIsUpgraded(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/sessions", 0o700)
	if _, err := OpenHome(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/format"); string(b) != strconv.Itoa(Format)+"\n" {
		t.Fatalf("format file %q", b)
	}
}

func TestOpenHome_RefusesAHomeOfANewerFormat(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/format", []byte("7\n"), 0o600)
	_, err := OpenHome(dir)
	if !isErr(err, ErrNewerFormat) {
		t.Fatalf("err = %v", err)
	}
	if want := "written by a newer kandev (format 7); upgrade kandev"; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	if b, _ := os.ReadFile(dir + "/format"); string(b) != "7\n" {
		t.Fatalf("the newer home's format file was rewritten: %q", b)
	}
}

func TestOpenHome_CorruptFormatFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/format", []byte("one\n"), 0o600)
	if _, err := OpenHome(dir); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err = %v", err)
	}
}

// writeRecord writes a raw record file, as an older or newer kandev would.
func writeRecord(t *testing.T, h *Home, id, body string) {
	t.Helper()
	if err := os.WriteFile(h.RecordPath(id), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSession_RecordWithoutFormatIsFormat0AndUpgradedWhenWritten(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	writeRecord(t, h, "old", `{"id":"old","state":"WAITING_FOR_INPUT","task_state":"REVIEW","title":"before formats"}`)
	s, err := h.LoadSession("old")
	if err != nil || s.Format != 0 {
		t.Fatalf("load: %+v, %v", s, err)
	}
	// A change that changes nothing writes nothing: the record stays as it was.
	if _, err := h.UpdateSession("old", func(*Session) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(h.RecordPath("old")); strings.Contains(string(b), `"format"`) {
		t.Fatalf("a no-op update rewrote the record: %s", b)
	}
	if _, err := h.UpdateSession("old", func(s *Session) error { s.Title = "after"; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err = h.LoadSession("old")
	if err != nil || s.Format != Format || s.Title != "after" {
		t.Fatalf("after the write: %+v, %v", s, err)
	}
}

func TestSession_UnknownRecordFieldsSurviveARewrite(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	writeRecord(t, h, "s", `{"format":1,"id":"s","state":"WAITING_FOR_INPUT","pinned_until":"2030-01-01T00:00:00Z",`+
		`"tally":{"cost":{"amount":0.25,"currency":"USD"},"turns":[1,2]},"zeta":null}`)
	if _, err := h.UpdateSession("s", func(s *Session) error { s.Title = "renamed"; return nil }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(h.RecordPath("s"))
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("rewritten record is not JSON: %v\n%s", err, b)
	}
	want := map[string]string{
		"pinned_until": `"2030-01-01T00:00:00Z"`,
		"tally":        `{"cost":{"amount":0.25,"currency":"USD"},"turns":[1,2]}`,
		"zeta":         `null`,
		"title":        `"renamed"`,
	}
	for k, v := range want {
		if c := compactJSON(t, got[k]); c != v {
			t.Errorf("%s = %s, want %s", k, c, v)
		}
	}
	// And a second rewrite keeps them again.
	if _, err := h.UpdateSession("s", func(s *Session) error { s.Title = "again"; return nil }); err != nil {
		t.Fatal(err)
	}
	s, _ := h.LoadSession("s")
	if len(s.Unknown) != 3 || compactJSON(t, s.Unknown["tally"]) != want["tally"] {
		t.Fatalf("unknown fields after a second rewrite: %v", s.Unknown)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSession_RecordOfANewerFormatIsRefusedNeverRewritten(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	body := `{"format":99,"id":"new","state":"WAITING_FOR_INPUT"}`
	writeRecord(t, h, "new", body)
	writeRecord(t, h, "cur", `{"format":1,"id":"cur","state":"WAITING_FOR_INPUT"}`)
	_, err := h.LoadSession("new")
	if !isErr(err, ErrNewerFormat) || err.Error() != "session new was written by a newer kandev (format 99); upgrade kandev" {
		t.Fatalf("load: %v", err)
	}
	if _, err := h.UpdateSession("new", func(s *Session) error { s.Title = "x"; return nil }); !isErr(err, ErrNewerFormat) {
		t.Fatalf("update: %v", err)
	}
	if b, _ := os.ReadFile(h.RecordPath("new")); string(b) != body {
		t.Fatalf("the newer record was rewritten: %s", b)
	}
	ss, rep, err := h.listSessionsReport()
	if err != nil || len(ss) != 1 || ss[0].ID != "cur" || rep.Newer != 1 || rep.NewerFormat != 99 {
		t.Fatalf("list: %d sessions, %+v, %v", len(ss), rep, err)
	}
}

func TestScanLog_KeepsAndCountsEventsOfUnknownTypes(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	line := `{"seq":2,"timestamp":"2026-01-01T00:00:00Z","type":"teleport","session_id":"s","epoch":3,"to_seq":1}`
	os.WriteFile(h.LogPath("s"), []byte(`{"seq":1,"timestamp":"2026-01-01T00:00:00Z","type":"state","session_id":"s","state":"RUNNING"}`+"\n"+line+"\n"), 0o600)
	evs, rep, err := eventlog.ReadAll(h.LogPath("s"))
	if err != nil || rep.Problems() != "" {
		t.Fatal(err, rep)
	}
	if len(evs) != 2 || rep.UnknownEvents != 1 {
		t.Fatalf("%d events, %d unknown", len(evs), rep.UnknownEvents)
	}
	if evs[0].Raw != nil || string(evs[1].Raw) != line || evs[1].Type != "teleport" {
		t.Fatalf("raw of the known %q, of the unknown %q", evs[0].Raw, evs[1].Raw)
	}
}

func TestSession_Format1PausedReasonIsReadAsAPauseOfTheLastTurn(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	writeRecord(t, h, "old", `{"format":1,"id":"old","state":"WAITING_FOR_INPUT","turns":3,"paused":"the agent profile or its command changed since the turn started"}`)
	writeRecord(t, h, "stopped", `{"format":1,"id":"stopped","state":"WAITING_FOR_INPUT","turns":2,"paused":"the session was stopped explicitly (kandev stop)"}`)
	s, err := h.LoadSession("old")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pause == nil || s.Pause.Kind != PauseAgentChanged || s.Pause.Turn != "t3" || s.Interrupted == nil || s.Interrupted.Turn != "t3" {
		t.Fatalf("pause %+v, interrupted %+v", s.Pause, s.Interrupted)
	}
	if _, ok := s.Unknown["paused"]; ok {
		t.Fatal("the legacy field is kept as unknown and would be written back")
	}
	s, err = h.LoadSession("stopped")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pause != nil || s.Interrupted != nil || !s.Stopped {
		t.Fatalf("a stop is not a pause: pause %+v, interrupted %+v, stopped %v", s.Pause, s.Interrupted, s.Stopped)
	}
}
