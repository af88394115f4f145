package history

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// genLog builds a session log the way owners write one, with the awkward
// parts: blank text, thoughts, tool calls updated and answered later in the
// turn, orphan results, permission requests splitting a message, markers in
// and between turns, turns that die and are repaired by the next owner (the
// unknown results arrive after agent_started, before the turn's turn_ended),
// chunks logged after turn_ended, and events before the first turn.
func genLog(seed uint64, turns int) []eventlog.Event {
	r := rand.New(rand.NewPCG(seed, 7))
	var evs []eventlog.Event
	add := func(e eventlog.Event) {
		e.Seq = int64(len(evs) + 1)
		e.SessionID = "ses"
		e.Timestamp = "2026-01-02T03:04:05Z"
		evs = append(evs, e)
	}
	marker := func(turn string) {
		kinds := []MarkerKind{MarkerProviderFailure, MarkerSessionUnhealthy, MarkerSessionRecovered, MarkerContinuationPaused, MarkerPromptQueued, MarkerPromptTimeout, MarkerAgentFailure}
		m := NewMarker(kinds[r.IntN(len(kinds))], fmt.Sprint("marker ", len(evs)+1), "")
		m.TurnID = turn
		add(m)
	}
	add(eventlog.Event{Type: eventlog.EventAgentStarted, Restore: "new"})
	if r.IntN(2) == 0 {
		add(eventlog.Event{Type: eventlog.EventAgentMessage, Content: "banner before any turn"})
	}
	for t := 1; t <= turns; t++ {
		turn := fmt.Sprint("t", t)
		sources := []string{eventlog.SourceUser, eventlog.SourceInitial, eventlog.SourceQueued, eventlog.SourceContinuation}
		add(eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turn, Source: sources[r.IntN(len(sources))]})
		text := fmt.Sprint("prompt ", t)
		if r.IntN(10) == 0 {
			text = "  "
		}
		add(eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turn, Role: "user", Content: text})
		add(eventlog.Event{Type: eventlog.EventState, TurnID: turn, State: state.StateRunning})
		var open []string
		calls := 0
		for k := r.IntN(12); k > 0; k-- {
			switch x := r.IntN(20); {
			case x < 7:
				chunks := []string{"word ", "", " \n", "more text"}
				add(eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: turn, Content: chunks[r.IntN(len(chunks))]})
			case x < 9:
				add(eventlog.Event{Type: eventlog.EventAgentThought, TurnID: turn, Content: "hmm "})
			case x < 12:
				calls++
				id := fmt.Sprintf("call-%d-%d", t, calls)
				in := json.RawMessage(`{}`)
				if r.IntN(2) == 0 {
					in = json.RawMessage(`{"path":"a.txt"}`)
				}
				add(eventlog.Event{Type: eventlog.EventToolCall, TurnID: turn, ToolCallID: id, ToolName: "Read", ToolStatus: "pending", Input: in})
				open = append(open, id)
			case x < 13 && len(open) > 0:
				add(eventlog.Event{Type: eventlog.EventToolCall, TurnID: turn, ToolCallID: open[0], ToolName: "Read a.txt", ToolStatus: "in_progress", Input: json.RawMessage(`{"path":"a.txt"}`)})
			case x < 15 && len(open) > 0:
				i := r.IntN(len(open))
				add(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: open[i], ToolName: "Read", ToolStatus: "completed", Content: "out"})
				open = slices.Delete(open, i, i+1)
			case x < 16:
				add(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: fmt.Sprintf("orphan-%d-%d", t, k), ToolName: "Run", ToolStatus: "failed", Content: "no call"})
			case x < 17 && len(open) > 0:
				add(eventlog.Event{Type: eventlog.EventPermissionRequest, TurnID: turn, ToolCallID: open[0]})
				add(eventlog.Event{Type: eventlog.EventPermissionResolved, TurnID: turn, ToolCallID: open[0], Content: "selected allow"})
			case x < 18:
				marker(turn)
			default:
				add(eventlog.Event{Type: eventlog.EventPlan, TurnID: turn, Data: json.RawMessage(`{"entries":[]}`)})
			}
		}
		if r.IntN(6) == 0 { // the owner dies; the next one repairs the turn
			add(eventlog.Event{Type: eventlog.EventAgentStarted, Restore: "resume"})
			for _, id := range open {
				add(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: id, ToolName: "Read", ToolStatus: "unknown", Content: "unknown outcome"})
			}
			add(eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopShutdown})
			m := NewMarker(MarkerSessionRepaired, "Repaired turn "+turn, "")
			m.TurnID = turn
			add(m)
			continue
		}
		for _, id := range open {
			add(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: id, ToolName: "Read", ToolStatus: "completed", Content: "late out"})
		}
		add(eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopEndTurn})
		if r.IntN(5) == 0 { // chunks the owner logged after the turn ended
			add(eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: turn, Content: "trailing"})
		}
		add(eventlog.Event{Type: eventlog.EventState, TurnID: turn, State: state.StateWaitingForInput})
		if r.IntN(4) == 0 {
			marker("")
		}
	}
	return evs
}

// readWindow feeds a window from the end of events, as the reader does.
func readWindow(events []eventlog.Event, w *TailWindow) {
	for i := len(events) - 1; i >= 0; i-- {
		if !w.Add(events[i]) {
			return
		}
	}
}

func TestTailWindow_PagesEqualPagesOfTheWholeTranscript(t *testing.T) {
	for seed := uint64(1); seed <= 25; seed++ {
		events := genLog(seed, 1+int(seed)%25)
		all := Assemble(events)
		for _, limit := range []int{1, 2, 3, 7, 1000} {
			for before := int64(0); before <= int64(len(events))+1; before++ {
				want, wantOlder, wantNext := Page(all, before, limit)
				w := NewTailWindow(before, limit+1, true)
				readWindow(events, w)
				got, older, next := w.TranscriptPage(limit)
				if (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) || older != wantOlder || next != wantNext {
					t.Fatalf("seed %d, before %d, limit %d:\n got %d entries, older %v, next %d: %s\nwant %d entries, older %v, next %d: %s",
						seed, before, limit, len(got), older, next, js(got), len(want), wantOlder, wantNext, js(want))
				}
			}
		}
	}
}

func TestTailWindow_ReadsOnlyWhatThePageNeeds(t *testing.T) {
	// 10,000 turns of 8 events; the newest page of 3 entries needs two turns
	// and the turn before them (to know there is an older entry).
	events := genLog(3, 0)
	for t := 1; len(events) < 80_000; t++ {
		turn := fmt.Sprint("t", t)
		for _, e := range []eventlog.Event{
			{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser},
			{Type: eventlog.EventUserMessage, TurnID: turn, Content: "question"},
			{Type: eventlog.EventAgentMessage, TurnID: turn, Content: "answer "},
			{Type: eventlog.EventAgentMessage, TurnID: turn, Content: "more"},
			{Type: eventlog.EventToolCall, TurnID: turn, ToolCallID: turn + "-c", ToolName: "Read"},
			{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: turn + "-c", ToolStatus: "completed"},
			{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopEndTurn},
			{Type: eventlog.EventState, TurnID: turn, State: state.StateWaitingForInput},
		} {
			e.Seq = int64(len(events) + 1)
			events = append(events, e)
		}
	}
	w := NewTailWindow(0, 3+1, true)
	readWindow(events, w)
	if !w.Done() || len(w.Events()) > 3*8 {
		t.Fatalf("read %d events for a page of 3 (done %v)", len(w.Events()), w.Done())
	}
	page, older, next := w.TranscriptPage(3)
	if len(page) != 3 || !older || next != page[0].StartSequence || page[2].Message.Role != RoleAssistant {
		t.Fatalf("page %s older %v next %d", js(page), older, next)
	}
}

func TestTailWindow_WithoutTurnsReadsTheWholeLog(t *testing.T) {
	var events []eventlog.Event
	for i := 1; i <= 50; i++ {
		events = append(events, eventlog.Event{Seq: int64(i), Type: eventlog.EventUserMessage, Content: fmt.Sprint("m", i)})
	}
	w := NewTailWindow(0, 3, true)
	readWindow(events, w)
	page, older, next := w.TranscriptPage(2)
	if w.Done() || len(page) != 2 || page[1].Message.Parts[0].Text != "m50" || !older || next != 49 {
		t.Fatalf("done %v page %s older %v next %d", w.Done(), js(page), older, next)
	}
}

// recapJSON is a recap as bytes, generated_at fixed.
func recapJSON(t *testing.T, r Recap) string {
	t.Helper()
	r.Snapshot.GeneratedAt = time.Time{}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recapIn reads a recap of events the way kandev recap does: the newest
// window from the end, then whole turns back to the digest (or the start).
func recapIn(events []eventlog.Event, before Digest, limit int) (Recap, Digest, bool) {
	w := NewTailWindow(0, limit, false)
	var span Span
	i := len(events) - 1
	for ; i >= 0; i-- {
		if !w.Add(events[i]) {
			break
		}
	}
	if w.Done() && (before.Through == 0 || events[i].Seq > before.Through) {
		end := i // events[i] is the window's oldest
		for j := i - 1; j >= 0; j-- {
			if events[j].Type == eventlog.EventTurnStarted || j == 0 {
				span.AddOlder(slices.Clone(events[j:end]))
				end = j
				if before.Through > 0 && events[j].Seq <= before.Through {
					break
				}
			}
		}
	}
	in := RecapInput{Session: state.Session{ID: "ses"}, Badge: "idle", Limit: limit, Before: before, Skipped: span, Window: w.Events()}
	return BuildRecap(in)
}

func TestBuildRecap_IsTheSameWhateverTheDigestCovers(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		events := genLog(seed, 5+int(seed)%30)
		for _, limit := range []int{1, 20} {
			want, _, _ := recapIn(events, Digest{}, limit)
			// Digests made when the log was shorter, as successive recaps leave them.
			for end := 1; end <= len(events); end += 2 + int(seed)%5 {
				_, d, ok := recapIn(events[:end], Digest{}, limit)
				if !ok {
					continue
				}
				got, _, _ := recapIn(events, d, limit)
				if recapJSON(t, got) != recapJSON(t, want) {
					t.Fatalf("seed %d limit %d, digest through %d:\n got %s\nwant %s", seed, limit, d.Through, recapJSON(t, got), recapJSON(t, want))
				}
				// A digest made from a digest is as good.
				_, d2, ok := recapIn(events, d, limit)
				if ok {
					again, _, _ := recapIn(events, d2, limit)
					if recapJSON(t, again) != recapJSON(t, want) {
						t.Fatalf("seed %d limit %d, digest through %d then %d differs", seed, limit, d.Through, d2.Through)
					}
				}
			}
		}
	}
}

func TestBuildRecap_CountsAndCursors(t *testing.T) {
	events := readEvents(t, "transcript/interrupted.events.jsonl")
	r, next, ok := BuildRecap(RecapInput{Session: state.Session{ID: "ses-crash", State: state.StateWaitingForInput}, Badge: "idle", Limit: 2, Window: events,
		Unserved: []state.Input{
			{ID: "in-1", Kind: state.InputPrompt, Text: "use token=" + "hunter2hunter2"},
			{ID: "in-2", Kind: state.InputCancel},
		}, InboxServed: 3})
	if !ok || next.Through != 11 || next.Messages != 2 || next.TranscriptCursor != 9 {
		t.Fatalf("digest %+v ok %v", next, ok)
	}
	if len(r.RecentMessages) != 2 || r.OmittedMessages != 2 || r.RecentMessages[0].StartSequence != 12 {
		t.Fatalf("messages: %d shown, %d omitted: %s", len(r.RecentMessages), r.OmittedMessages, js(r.RecentMessages))
	}
	if len(r.RecentMarkers) != 2 || len(r.PendingMarkers) != 0 {
		t.Fatalf("markers %s pending %s", js(r.RecentMarkers), js(r.PendingMarkers))
	}
	if r.Snapshot.EventCursor != 15 || r.Snapshot.TranscriptCursor != 14 || r.Snapshot.QueueGeneration != 5 || r.Snapshot.Consistency != "persisted_reads" {
		t.Fatalf("snapshot %+v", r.Snapshot)
	}
	if len(r.PendingInputs) != 1 || r.PendingInputs[0].Text != "use token="+Redacted {
		t.Fatalf("pending inputs %+v", r.PendingInputs)
	}
}

func TestBuildRecap_BoundsLongText(t *testing.T) {
	long := make([]byte, 10_000)
	for i := range long {
		long[i] = 'x'
	}
	events := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t1"},
		{Seq: 2, Type: eventlog.EventUserMessage, TurnID: "t1", Content: string(long)},
		{Seq: 3, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c", Input: json.RawMessage(`{"content":"` + string(long) + `"}`)},
		{Seq: 4, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c", Content: string(long)},
	}
	r, _, _ := BuildRecap(RecapInput{Window: events, Limit: 5})
	text := r.RecentMessages[0].Message.Parts[0].Text
	tool := r.RecentMessages[1].Message.Parts[0]
	if len(text) != maxRecapTextBytes || len(tool.Output) != maxRecapToolBytes || !json.Valid(tool.Input) || len(tool.Input) > maxRecapToolBytes+20 {
		t.Fatalf("text %d bytes, output %d, input %d (%s...)", len(text), len(tool.Output), len(tool.Input), tool.Input[:20])
	}
}

func TestRedactSession_RedactsDisplayTextOnly(t *testing.T) {
	secret := "sk-" + "proj" + "Abcdefghijklmnopqrstuvwx1234"
	s := state.Session{ID: "20260101-000000-abcd", Title: "use " + secret, Cwd: "/home/me/work", ErrorMessage: "the agent process exited: Authorization: Bearer abcdefghijklmnop1234",
		InitialPrompt: "api_key=" + "qwertyuiopasdf123", AgentCommand: []string{"agent", "--api-key", "zxcvbnmasdfgh123", "--model", "big"}}
	got := RedactSession(s)
	b, _ := json.Marshal(got)
	for _, leak := range []string{secret, "abcdefghijklmnop1234", "qwertyuiopasdf123", "zxcvbnmasdfgh123"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("redacted record still holds %q: %s", leak, b)
		}
	}
	if got.ID != s.ID || got.Cwd != s.Cwd || got.AgentCommand[3] != "--model" || got.AgentCommand[4] != "big" || s.AgentCommand[2] != "zxcvbnmasdfgh123" {
		t.Errorf("redaction touched more than display text: %+v (original %+v)", got, s)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
