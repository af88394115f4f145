package history

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// logLines is a block of log lines as the log writer encodes them.
func logLines(t *testing.T, events ...eventlog.Event) []byte {
	t.Helper()
	var b []byte
	for i, e := range events {
		e.Seq, e.Timestamp, e.SessionID, e.TurnID = int64(i+1), "2026-01-05T09:00:00Z", "s1", "t1"
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	return b
}

func TestLiteralScan_PicksTheLinesThatMayHoldTheWord(t *testing.T) {
	msg := func(s string) eventlog.Event { return eventlog.Event{Type: eventlog.EventAgentMessage, Content: s} }
	for _, tc := range []struct {
		query, content string
		want           string // "full", "partial" or "" (line not picked)
	}{
		{"lexer", "the LeXeR is fixed", "full"},
		{"a<b && c", "if a<b && c then", "full"}, // written escaped: a\u003cb \u0026\u0026 c
		{`say "hi"`, `I say "hi" twice`, "full"}, // written escaped: \"hi\"
		{`C:\dir`, `cd C:\dir now`, "full"},
		{"naïve", "a plan that is NAÏVE in the middle of a long sentence", ""}, // only ASCII letters fold
		{"lexer", "ends with the lex", "partial"},
		{"lexer", "er starts this one", ""}, // the piece holds no x: the chunk before has it
		{"lexer", "xer starts this one", "partial"},
		{"lexer", "a long text with an x in its middle and no match at all", ""},
		{"lexer", "fix it", ""},            // near the start, but "fi" is not "le"
		{"lexer", "then we relax", ""},     // near the end, but "x" then the end is not "xer"
		{"lexer", "the le", ""},            // no anchor (x) in it: the next chunk is picked instead
		{"lexer", "xylophones", "partial"}, // may follow a chunk ending in "le"
		{"lexer", "nothing", ""},
	} {
		got := ""
		newLiteral(tc.query).scan(logLines(t, msg(tc.content)), func(line []byte, partial bool) {
			if !partial {
				got = "full"
			} else if got == "" {
				got = "partial"
			}
		})
		if got != tc.want {
			t.Errorf("%q in %q: picked %v, want %q", tc.query, tc.content, got, tc.want)
		}
	}
}

func TestLiteral_AnchorsOnTheRarestByte(t *testing.T) {
	for q, want := range map[string]byte{"lexer": 'x', "the parser": 'h', "Quiz": 'q', "zone": 'z', "état": 0xc3, "a-b": 'b'} {
		if l := newLiteral(q); l.raw[l.anchor] != want {
			t.Errorf("%q: anchor %q, want %q", q, l.raw[l.anchor], want)
		}
	}
}

func TestSnippet_ShowsTheMatchOnOneLineWithContext(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, tc := range []struct {
		text, match, want string
	}{
		{"fix the\n\tlexer now", "lexer", "fix the lexer now"},
		{long + "LEXER " + long, "LEXER", "…" + strings.Repeat("word ", 12) + "LEXER " + long[:snippetAfter-1] + "…"},
		{strings.Repeat("é", 40) + "x", "x", "…" + strings.Repeat("é", 30) + "x"},
	} {
		start := strings.Index(tc.text, tc.match)
		got, at := snippet(tc.text, start, start+len(tc.match))
		if got != tc.want || got[at[0]:at[1]] != tc.match {
			t.Errorf("snippet of %q:\n got %q (match %q)\nwant %q", tc.match, got, got[at[0]:at[1]], tc.want)
		}
	}
}

// BenchmarkSearch_200Sessions is the whole search (listing, scanning,
// decoding the candidates) over 200 sessions of 270 events (about 11 MB),
// for a word in 4 of them.
func BenchmarkSearch_200Sessions(b *testing.B) {
	h, err := state.OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		id := fmt.Sprintf("20260105-090000-%08x", i)
		s := &state.Session{ID: id, Title: "t", Agent: "demo", State: state.StateWaitingForInput}
		if err := h.CreateSession(s); err != nil {
			b.Fatal(err)
		}
		var evs []eventlog.Event
		for t := range 45 {
			prompt := fmt.Sprintf("Please fix the failing test %d in state/log_test.go.", t)
			if i%50 == 0 && t == 2 {
				prompt += " The quuxlexer is involved."
			}
			evs = append(evs, eventlog.Event{Type: eventlog.EventUserMessage, Content: prompt},
				eventlog.Event{Type: eventlog.EventToolCall, ToolName: "Read state/log.go", ToolCallID: "c"},
				eventlog.Event{Type: eventlog.EventToolResult, ToolName: "Read state/log.go", ToolCallID: "c", Content: strings.Repeat("func (l *EventLog) Append(events ...*Event) error {\n", 4)})
			for c := range 3 {
				evs = append(evs, eventlog.Event{Type: eventlog.EventAgentMessage, Content: fmt.Sprintf("Chunk %d: the reader now skips a torn last line. ", c)})
			}
		}
		if err := appendAll(h, id, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		hits, _, err := Search(h, SearchOptions{Query: "quuxlexer"})
		if err != nil || len(hits) != 4 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
	}
}

func appendAll(h *state.Home, id string, evs []eventlog.Event) error {
	log, _, err := h.OpenLog(id, eventlog.OpenLogOptions{})
	if err != nil {
		return err
	}
	for i := range evs {
		if err := log.Append(&evs[i]); err != nil {
			return err
		}
	}
	return log.Close()
}

// TestSearch_FindsAWordHoweverTheStreamCutsIt cuts a message into chunks at
// every pair of places and checks that the scan of the log lines still
// finds the word in the message they make.
func TestSearch_FindsAWordHoweverTheStreamCutsIt(t *testing.T) {
	for _, tc := range []struct{ query, text string }{
		{"lexer", "we fixed the LEXER today"},
		{"a<b", `if a<b then say "so"`},
		{`"quoted"`, `it is "quoted" here`},
		{"zone", "the Zone is fine"},
	} {
		for i := 1; i < len(tc.text); i++ {
			for j := i + 1; j < len(tc.text); j++ {
				chunks := []string{tc.text[:i], tc.text[i:j], tc.text[j:]}
				var evs []eventlog.Event
				for _, c := range chunks {
					evs = append(evs, eventlog.Event{Type: eventlog.EventAgentMessage, Role: "assistant", Content: c})
				}
				block := logLines(t, evs...)
				f := logScan{m: newLiteral(tc.query), session: &state.Session{ID: "s1"}}
				f.m.scan(block, f.line)
				f.assemble(block)
				f.flush()
				if len(f.hits) != 1 || !strings.Contains(strings.ToLower(f.hits[0].Snippet), strings.ToLower(tc.query)) {
					t.Fatalf("%q in chunks %q: hits %+v", tc.query, chunks, f.hits)
				}
			}
		}
	}
}
