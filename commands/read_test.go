package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// syntheticTurn is one turn of a synthetic log: 10 events, two messages
// (the question, and the answer with one tool call).
func syntheticTurn(t int) []eventlog.Event {
	turn := fmt.Sprint("t", t)
	call := fmt.Sprint("call-", t)
	return []eventlog.Event{
		{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser},
		{Type: eventlog.EventUserMessage, TurnID: turn, Role: "user", Content: fmt.Sprintf("question %d", t)},
		{Type: eventlog.EventState, TurnID: turn, State: state.StateRunning},
		{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d part 1. ", t)},
		{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d part 2. ", t)},
		{Type: eventlog.EventToolCall, TurnID: turn, ToolCallID: call, ToolName: "Read state/log.go", ToolStatus: "pending", Input: json.RawMessage(`{"path":"state/log.go"}`)},
		{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: call, ToolName: "Read state/log.go", ToolStatus: "completed", Content: "package state"},
		{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d done.", t)},
		{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopEndTurn},
		{Type: eventlog.EventState, TurnID: turn, State: state.StateWaitingForInput},
	}
}

// writeSyntheticSession writes a session of n events in the docs/event-log.md format:
// turns of syntheticTurn, with a marker after turn 5 (provider_failure,
// pending for good) and after the second to last turn (prompt_timeout,
// pending: no recovery follows), and a session_unhealthy resolved by a
// session_recovered in between. It returns the number of turns.
func writeSyntheticSession(tb testing.TB, h *state.Home, id string, n int) int {
	tb.Helper()
	turns := (n - 4) / 10
	markers := map[int]eventlog.Event{
		5:         history.NewMarker(history.MarkerProviderFailure, "The agent failed the turn: 529 overloaded", ""),
		7:         history.NewMarker(history.MarkerSessionUnhealthy, "The agent stopped answering pings", ""),
		9:         history.NewMarker(history.MarkerSessionRecovered, "The agent answers again", ""),
		turns - 1: history.NewMarker(history.MarkerPromptTimeout, "The agent sent nothing for 10m0s; kandev stopped it.", ""),
	}
	f, err := os.Create(h.LogPath(id))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	seq := int64(0)
	write := func(e eventlog.Event) {
		seq++
		e.Seq, e.SessionID, e.Timestamp = seq, id, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(seq)*time.Millisecond).Format(time.RFC3339Nano)
		b, _ := json.Marshal(e)
		w.Write(append(b, '\n'))
	}
	for t := 1; t <= turns; t++ {
		for _, e := range syntheticTurn(t) {
			write(e)
		}
		if m, ok := markers[t]; ok {
			m.TurnID = fmt.Sprint("t", t)
			write(m)
		}
	}
	for seq < int64(n) {
		write(eventlog.Event{Type: eventlog.EventAgentExited, Content: "exited with status 0", PID: 4242})
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &state.Session{ID: id, TaskID: id, Title: "synthetic", Workspace: "bench", Cwd: "/tmp", Agent: "demo",
		State: state.StateWaitingForInput, StopReason: eventlog.StopEndTurn, CreatedAt: now, LastActivityAt: now, AgentLaunched: true, Turns: turns}
	if err := h.CreateSession(s); err != nil {
		tb.Fatal(err)
	}
	return turns
}

func newSyntheticHome(tb testing.TB, n int) (*state.Home, *state.Session, int) {
	tb.Helper()
	h, err := state.OpenHome(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	turns := writeSyntheticSession(tb, h, "20260102-030405-synth", n)
	s, err := h.LoadSession("20260102-030405-synth")
	if err != nil {
		tb.Fatal(err)
	}
	return h, s, turns
}

func TestReadTranscriptPage_LastPageOfASyntheticLog(t *testing.T) {
	h, s, turns := newSyntheticHome(t, 10_000)
	page, rep, err := readTranscriptPage(h.LogPath(s.ID), 0, 3, false)
	if err != nil || rep.Problems() != "" {
		t.Fatal(err, rep.Problems())
	}
	if len(page.Entries) != 3 || !page.HasOlder || page.NextBeforeSequence != page.Entries[0].StartSequence || page.Limit != 3 {
		t.Fatalf("page: %+v", page)
	}
	last := page.Entries[2].Message
	if last.Role != history.RoleAssistant || last.Parts[0].Text != fmt.Sprintf("answer %d part 1. answer %d part 2. ", turns, turns) ||
		last.Parts[1].State != history.ToolOutputAvailable || last.Parts[2].Text != fmt.Sprintf("answer %d done.", turns) {
		t.Fatalf("last entry: %+v", last)
	}
	if m := page.Entries[0].Message; m.Role != history.RoleSystem || m.Parts[0].Kind != string(history.MarkerPromptTimeout) {
		t.Fatalf("oldest entry of the page: %+v", m)
	}
}

// TestReadTranscriptPage_EveryPageIsThePageOfTheWholeTranscript: whatever
// --before is (a page boundary or mid-turn), the page read from the end of
// the file is history.Page over the whole transcript.
func TestReadTranscriptPage_EveryPageIsThePageOfTheWholeTranscript(t *testing.T) {
	h, s, _ := newSyntheticHome(t, 1500)
	evs, _, _ := eventlog.ReadAll(h.LogPath(s.ID))
	all := history.Assemble(evs)
	for before := int64(0); before <= 1501; before += 3 {
		for _, limit := range []int{1, 5} {
			want, wo, wn := history.Page(all, before, limit)
			got, _, err := readTranscriptPage(h.LogPath(s.ID), before, limit, false)
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got.Entries)
			if err != nil || (len(want) > 0 || len(got.Entries) > 0) && string(a) != string(b) || wo != got.HasOlder || wn != got.NextBeforeSequence {
				t.Fatalf("before %d limit %d: %s vs %s", before, limit, b, a)
			}
		}
	}
}

// TestReadRecap_DigestGivesTheSameRecap: the first recap reads the whole log
// and leaves a digest; later ones read back only to it, after the log grew
// too, and give the same bytes as a recap without any digest.
func TestReadRecap_DigestGivesTheSameRecap(t *testing.T) {
	h, s, turns := newSyntheticHome(t, 5_000)
	at := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	recap := func() string {
		t.Helper()
		r, _, err := readRecap(h, s, "idle", 7, false, at)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		return string(b)
	}
	cold := recap()
	if _, err := os.Stat(h.DigestPath(s.ID)); err != nil {
		t.Fatal("no digest after the first recap")
	}
	if warm := recap(); warm != cold {
		t.Fatalf("with the digest:\n%s\nwithout:\n%s", warm, cold)
	}
	var r history.Recap
	json.Unmarshal([]byte(cold), &r)
	if r.OmittedMessages != 2*turns-7 || len(r.RecentMessages) != 7 || len(r.PendingMarkers) != 2 || len(r.RecentMarkers) != 4 {
		t.Fatalf("omitted %d (want %d), %d messages, pending %s, recent markers %d", r.OmittedMessages, 2*turns-7, len(r.RecentMessages), readTestJSON(r.PendingMarkers), len(r.RecentMarkers))
	}

	// The log grows by two turns; the digest still covers its start.
	l, _, err := h.OpenLog(s.ID, eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for t2 := turns + 1; t2 <= turns+2; t2++ {
		for _, e := range syntheticTurn(t2) {
			l.Append(&e)
		}
	}
	l.Close()
	grown := recap()
	os.Remove(h.DigestPath(s.ID))
	if fresh := recap(); fresh != grown {
		t.Fatalf("after growth, with the old digest:\n%s\nwithout:\n%s", grown, fresh)
	}

	// A digest of another log (same length, other lines) is not used.
	os.WriteFile(h.DigestPath(s.ID), bytes.Replace(readTestFile(t, h.DigestPath(s.ID)), []byte(`"check":"`), []byte(`"check":"0`), 1), 0o600)
	if again := recap(); again != grown {
		t.Fatalf("a stale digest changed the recap:\n%s\n%s", again, grown)
	}
}

func readTestFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readTestJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestReadBundle_RefusesBrokenBundles(t *testing.T) {
	head := `{"kandev_bundle":1,"session":{"id":"20260102-030405-aaaa"}}`
	ev := func(seq int) string {
		return fmt.Sprintf(`{"seq":%d,"timestamp":"2026-01-02T03:04:05Z","type":"state","session_id":"20260102-030405-aaaa","state":"WAITING_FOR_INPUT"}`, seq)
	}
	cases := []struct {
		name, bundle, err string
	}{
		{"good", head + "\n" + ev(1) + "\n" + ev(2) + "\n", ""},
		{"good without a final newline", head + "\n" + ev(1), ""},
		{"empty", "", "line 1 is empty"},
		{"not a header", ev(1) + "\n", "line 1: not a kandev bundle header"},
		{"future version", `{"kandev_bundle":2,"session":{"id":"x"}}` + "\n", "bundle version 2"},
		{"no session", `{"kandev_bundle":1}` + "\n", "no session record"},
		{"bad id", `{"kandev_bundle":1,"session":{"id":"../x"}}` + "\n", "invalid session id"},
		{"gap", head + "\n" + ev(1) + "\n" + ev(3) + "\n", "line 3: seq 3 where 2 was due"},
		{"starts at 2", head + "\n" + ev(2) + "\n", "line 2: seq 2 where 1 was due"},
		{"bad line", head + "\n" + ev(1) + "\n{\"seq\":2,\n" + ev(3) + "\n", "line 3: not a JSON event"},
		{"blank line", head + "\n\n" + ev(1) + "\n", "line 2: not a JSON event"},
		{"torn last line", head + "\n" + ev(1) + "\n" + `{"seq":2`, "line 3: not a JSON event"},
		{"other session", head + "\n" + strings.Replace(ev(1), "aaaa", "bbbb", 1) + "\n", "line 2: event of session"},
		{"a record nested too deep", `{"kandev_bundle":1,"session":{"id":"20260102-030405-aaaa","capabilities":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}}\n", "line 1: the session record: its values are nested too deep"},
		{"a fractional seq", head + "\n" + strings.Replace(ev(1), `"seq":1`, `"seq":1.5`, 1) + "\n", "line 2: not a JSON event"},
		{"a negative seq", head + "\n" + strings.Replace(ev(1), `"seq":1`, `"seq":-1`, 1) + "\n", "line 2: seq -1 where 1 was due"},
	}
	for _, tc := range cases {
		_, log, n, err := readBundle(strings.NewReader(tc.bundle), "")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && (n == 0 || bytes.Count(log, []byte("\n")) != n):
			t.Errorf("%s: %d events, log %q", tc.name, n, log)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestImportedRecord_IsIdleAndOwnsNoProcess(t *testing.T) {
	s := state.Session{ID: "old", TaskID: "old", State: state.StateRunning, AgentPID: 7, AgentStart: "9", OwnerPID: 8, CurrentTurn: "t3",
		ResumeToken: "tok", InboxOffset: 99, PermissionPending: true, Title: "deploy with token=" + "abcd1234abcd1234"}
	got := importedRecord(s, "new", false, time.Time{})
	if got.ID != "new" || got.TaskID != "new" || got.State != state.StateWaitingForInput || got.AgentPID != 0 || got.OwnerPID != 0 ||
		got.CurrentTurn != "" || got.ResumeToken != "" || got.InboxOffset != 0 || got.PermissionPending || strings.Contains(got.Title, "abcd1234") {
		t.Fatalf("%+v", got)
	}
	s.Worktree = &worktree.Worktree{Path: "/src/app-wt", Branch: "wt", Owned: true}
	for _, keepID := range []bool{false, true} {
		if got := importedRecord(s, "new", keepID, time.Time{}); got.Worktree == nil || got.Worktree.Owned || got.Worktree.Path != "/src/app-wt" || !s.Worktree.Owned {
			t.Fatalf("keepID %v: an imported worktree must never be owned (prune would delete it), and the input is not changed: %+v", keepID, got.Worktree)
		}
	}
	if kept := importedRecord(s, "old", true, time.Time{}); kept.ResumeToken != "tok" || kept.ID != "old" {
		t.Fatalf("--keep-id: %+v", kept)
	}
	done := s
	done.State = state.StateCompleted
	if got := importedRecord(done, "new", false, time.Time{}); got.State != state.StateCompleted {
		t.Fatalf("a finished session stays finished: %s", got.State)
	}
}

// The benchmarks compare a last page and a recap on a log of a thousand
// events and one of a million (a warm digest: the first recap after the log
// grew reads back only to it). Run: go test ./commands -run '^$' -bench 'LastPage|Recap' -benchtime 200x
func benchmarkLastPage(b *testing.B, n int) {
	h, s, _ := newSyntheticHome(b, n)
	b.ResetTimer()
	for b.Loop() {
		page, _, err := readTranscriptPage(h.LogPath(s.ID), 0, history.DefaultPageLimit, false)
		if err != nil || len(page.Entries) != history.DefaultPageLimit {
			b.Fatalf("%d entries, %v", len(page.Entries), err)
		}
	}
}

func benchmarkRecap(b *testing.B, n int) {
	h, s, turns := newSyntheticHome(b, n)
	if _, _, err := readRecap(h, s, "idle", history.DefaultRecapLimit, false, time.Now()); err != nil { // leaves the digest
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, _, err := readRecap(h, s, "idle", history.DefaultRecapLimit, false, time.Now())
		if err != nil || r.OmittedMessages != 2*turns-history.DefaultRecapLimit {
			b.Fatalf("omitted %d, %v", r.OmittedMessages, err)
		}
	}
}

func BenchmarkLastPage_1kEvents(b *testing.B) { benchmarkLastPage(b, 1_000) }
func BenchmarkLastPage_1MEvents(b *testing.B) { benchmarkLastPage(b, 1_000_000) }
func BenchmarkRecap_1kEvents(b *testing.B)    { benchmarkRecap(b, 1_000) }
func BenchmarkRecap_1MEvents(b *testing.B)    { benchmarkRecap(b, 1_000_000) }
