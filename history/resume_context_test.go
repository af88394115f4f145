package history

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
)

func TestBuildResumeContext_MatchesGolden(t *testing.T) {
	events := readEvents(t, "transcript/basic.events.jsonl")
	got := BuildResumeContext(events, "Now add a test for the flag.\n", "ses-basic", 0)
	checkGolden(t, "resume_context.golden", []byte(got))
}

func TestBuildResumeContext_BoundedMatchesGolden(t *testing.T) {
	events := readEvents(t, "transcript/basic.events.jsonl")
	got := BuildResumeContext(events, "Now add a test for the flag.", "ses-basic", 900)
	if len(got) > 900 {
		t.Fatalf("%d bytes, bound 900", len(got))
	}
	checkGolden(t, "resume_context_bounded.golden", []byte(got))
}

func TestBuildResumeContext_EmptyHistoryStillHasFrame(t *testing.T) {
	got := BuildResumeContext(nil, "hello", "ses-1", 0)
	want := resumeContextHeader + resumeRequestHeader + "hello" + resumeInstructions
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// longTurns builds n turns of user 1.5 KB + assistant 1.5 KB (three chunks) +
// a tool call with its result.
func longTurns(n int) []eventlog.Event {
	var events []eventlog.Event
	seq := int64(0)
	add := func(e eventlog.Event) {
		seq++
		e.Seq = seq
		events = append(events, e)
	}
	for i := 0; i < n; i++ {
		turn := fmt.Sprintf("turn-%d", i)
		add(eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser})
		add(eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turn, Content: fmt.Sprintf("request %d: ", i) + strings.Repeat("u", 1500)})
		for c := 0; c < 3; c++ {
			add(eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: turn, Content: strings.Repeat("a", 500)})
		}
		id := fmt.Sprintf("call-%d", i)
		add(eventlog.Event{Type: eventlog.EventToolCall, TurnID: turn, ToolName: "Read notes.txt", ToolCallID: id})
		add(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolName: "Read notes.txt", ToolCallID: id, ToolStatus: "completed", Content: fmt.Sprintf("result %d ", i) + strings.Repeat("r", 300)})
		add(eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: "end_turn"})
	}
	return events
}

func TestBuildResumeContext_LongHistoryKeepsFirstRequestAndNewestEntries(t *testing.T) {
	events := longTurns(400)
	got := BuildResumeContext(events, "continue", "ses-long", 0)
	if len(got) > DefaultMaxReplayBytes {
		t.Fatalf("%d bytes, bound %d", len(got), DefaultMaxReplayBytes)
	}
	if !strings.HasPrefix(got, resumeContextHeader+"[USER]: request 0: uuu") {
		t.Errorf("first request not pinned at the top:\n%.300s", got)
	}
	if !strings.Contains(got, `earlier entries omitted; run "kandev transcript ses-long" to see them ...]`) {
		t.Error("omission note missing")
	}
	if strings.Count(got, "entries omitted") != 1 {
		t.Error("more than one omission note")
	}
	if !strings.Contains(got, "[TOOL RESULT: Read notes.txt] result 399 ") {
		t.Error("newest tool result missing")
	}
	if !strings.HasSuffix(got, resumeRequestHeader+"continue"+resumeInstructions) {
		t.Error("request and instructions not at the end")
	}
	if strings.Contains(got, "request 1: ") {
		t.Error("an old middle entry survived")
	}
	// The note counts exactly the entries left out: 4 entries a turn.
	shown := strings.Count(got, "\n[USER]: ") + strings.Count(got, "\n[ASSISTANT]: ") + strings.Count(got, "\n[TOOL CALL: ") + strings.Count(got, "\n[TOOL RESULT: ")
	wantNote := fmt.Sprintf("[... %d earlier entries omitted;", 400*4-shown)
	if !strings.Contains(got, wantNote) {
		t.Errorf("note does not say %q", wantNote)
	}
	if len(got) < DefaultMaxReplayBytes-4000 {
		t.Errorf("only %d of %d bytes used", len(got), DefaultMaxReplayBytes)
	}
}

func TestBuildResumeContext_StaysWithinAnyBound(t *testing.T) {
	events := longTurns(30)
	for _, bound := range []int{1, 50, 300, 420, 500, 700, 1000, 2500, 5000, 20000, 200000} {
		for _, request := range []string{"go on", strings.Repeat("请继续", 400)} {
			got := BuildResumeContext(events, request, "ses-b", bound)
			if len(got) > bound {
				t.Errorf("bound %d: %d bytes", bound, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("bound %d: invalid UTF-8", bound)
			}
		}
	}
}

func TestBuildResumeContext_CutsFirstMessageBeforeRequest(t *testing.T) {
	events := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventUserMessage, Content: strings.Repeat("x", 1800)},
		{Seq: 2, Type: eventlog.EventAgentMessage, Content: "done"},
	}
	frame := len(resumeContextHeader) + len(resumeRequestHeader) + len(resumeInstructions)
	request := "the current request"
	note := omittedNote(1, "s", false)
	bound := frame + len(request) + len(note) + 300
	got := BuildResumeContext(events, request, "s", bound)
	if len(got) > bound {
		t.Fatalf("%d bytes, bound %d", len(got), bound)
	}
	if !strings.Contains(got, resumeRequestHeader+request+resumeInstructions) {
		t.Error("request was cut although the first message could give way")
	}
	if !strings.Contains(got, "[USER]: xxx") || !strings.Contains(got, "x [truncated]\n") {
		t.Errorf("first message not kept cut:\n%s", got)
	}

	tight := frame + 30
	got = BuildResumeContext(events, strings.Repeat("r", 100), "s", tight)
	if len(got) > tight || strings.Contains(got, "[USER]") || !strings.Contains(got, "r [truncated]"+resumeInstructions) {
		t.Errorf("request not cut last:\n%s", got)
	}
}

func TestBuildResumeContext_CutsTextOnRuneBoundary(t *testing.T) {
	user := strings.Repeat("日本語", 1000)     // 9000 bytes, 3-byte runes
	asst := strings.Repeat("é", 600) + "😀😀" // 1208 bytes then 4-byte runes, in chunks below
	result := strings.Repeat("ü", 400)      // 800 bytes
	events := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventUserMessage, Content: user},
		{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t", Content: asst[:700]},
		{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: asst[700:] + strings.Repeat("😀", 300)},
		{Seq: 4, Type: eventlog.EventToolResult, ToolName: "cat", ToolCallID: "c", Content: result},
	}
	got := BuildResumeContext(events, "next", "s", 0)
	if !utf8.ValidString(got) {
		t.Fatal("invalid UTF-8")
	}
	lines := strings.Split(got, "\n")
	check := func(prefix string, limit int) {
		t.Helper()
		for _, l := range lines {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				text, ok := strings.CutSuffix(rest, truncatedMark)
				if !ok {
					t.Errorf("%s not marked truncated", prefix)
				}
				if len(text) > limit || len(text) < limit-3 {
					t.Errorf("%s kept %d bytes, want just under %d", prefix, len(text), limit)
				}
				return
			}
		}
		t.Errorf("no line %q", prefix)
	}
	check("[USER]: ", 2000)
	check("[ASSISTANT]: ", 2000)
	check("[TOOL RESULT: cat] ", 500)
}

func TestBuildResumeContext_FoldsEventsIntoEntries(t *testing.T) {
	events := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t1"},
		{Seq: 2, Type: eventlog.EventUserMessage, TurnID: "t1", Content: "  fix it  \n"},
		{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t1", Content: "\nLooking"},
		{Seq: 4, Type: eventlog.EventAgentThought, TurnID: "t1", Content: "hmm"},
		{Seq: 5, Type: eventlog.EventAgentMessage, TurnID: "t1", Content: " now."},
		{Seq: 6, Type: eventlog.EventPlan, TurnID: "t1"},
		{Seq: 7, Type: eventlog.EventAgentMessage, TurnID: "t1", Content: "After the plan."},
		{Seq: 8, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c1"},
		{Seq: 9, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c1", ToolName: "Run\nmake"},
		{Seq: 10, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c1", ToolName: "Run make", ToolStatus: "unknown"},
		{Seq: 11, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c2", ToolName: "ls", ToolStatus: "completed"},
		{Seq: 12, Type: eventlog.EventAgentMessage, TurnID: "t1", Content: "end of t1"},
		{Seq: 13, Type: eventlog.EventAgentMessage, TurnID: "t2", Content: "start of t2"},
		{Seq: 14, Type: eventlog.EventAgentMessage, TurnID: "t2", Content: "   "},
		{Seq: 15, Type: eventlog.EventTurnEnded, TurnID: "t2"},
		{Seq: 16, Type: eventlog.EventUserMessage, Content: "   "},
	}
	want := "[USER]: fix it\n" +
		"[ASSISTANT]: Looking now.\n" +
		"[ASSISTANT]: After the plan.\n" +
		"[TOOL CALL: Run make]\n" +
		"[TOOL RESULT: Run make] (unknown)\n" +
		"[TOOL RESULT: ls]\n" +
		"[ASSISTANT]: end of t1\n" +
		"[ASSISTANT]: start of t2\n"
	got := BuildResumeContext(events, "r", "s", 0)
	if wantAll := resumeContextHeader + want + resumeRequestHeader + "r" + resumeInstructions; got != wantAll {
		t.Errorf("got\n%s\nwant\n%s", got, wantAll)
	}
}

func TestBuildResumeContext_HandlesAMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	events := make([]eventlog.Event, 0, 1_000_000)
	for i := int64(1); len(events) < cap(events); i++ {
		switch i % 4 {
		case 1:
			events = append(events, eventlog.Event{Seq: i, Type: eventlog.EventUserMessage, Content: "please continue with step " + fmt.Sprint(i)})
		case 2, 3:
			events = append(events, eventlog.Event{Seq: i, Type: eventlog.EventAgentMessage, TurnID: fmt.Sprint(i / 4), Content: "working on it "})
		default:
			events = append(events, eventlog.Event{Seq: i, Type: eventlog.EventTurnEnded})
		}
	}
	got := BuildResumeContext(events, "go", "ses-big", 0)
	if len(got) > DefaultMaxReplayBytes || !strings.HasPrefix(got, resumeContextHeader+"[USER]: please continue with step 1\n[... ") {
		t.Fatalf("%d bytes:\n%.400s", len(got), got)
	}
}

func TestOmittedNote_SaysWhatIsKnownAboutTheCount(t *testing.T) {
	cases := []struct {
		n    int
		more bool
		want string
	}{
		{0, true, "[... earlier entries omitted;"},
		{3, true, "[... more than 3 earlier entries omitted;"},
		{1, false, "[... 1 earlier entry omitted;"},
		{7, false, "[... 7 earlier entries omitted;"},
	}
	for _, tc := range cases {
		got := omittedNote(tc.n, "ses-1", tc.more)
		if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, `run "kandev transcript ses-1" to see them ...]`+"\n") {
			t.Errorf("omittedNote(%d, %v) = %q, want it to start with %q", tc.n, tc.more, got, tc.want)
		}
	}
}

func TestBuildResumeContextWindow_UnreadOlderEntriesWithNothingDroppedGivesNoCountOfZero(t *testing.T) {
	hist := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventUserMessage, TurnID: "t1", Content: "first request"},
		{Seq: 90, Type: eventlog.EventAgentMessage, TurnID: "t9", Content: "newest answer"},
	}
	got := BuildResumeContextWindow(hist, "next", "ses-w", 0, true)
	if strings.Contains(got, "more than 0") || !strings.Contains(got, "[... earlier entries omitted;") {
		t.Fatalf("omission note for an unread older part:\n%s", got)
	}
}

func TestHasConversation_OnlyMessagesAndToolCallsCount(t *testing.T) {
	ev := func(typ string) eventlog.Event { return eventlog.Event{Type: typ} }
	for _, c := range []struct {
		name string
		evs  []eventlog.Event
		want bool
	}{
		{"an empty history", nil, false},
		{"turn bounds and a marker only", []eventlog.Event{ev(eventlog.EventTurnStarted), ev(eventlog.EventTurnEnded), ev(eventlog.EventMarker)}, false},
		{"a user message", []eventlog.Event{ev(eventlog.EventTurnStarted), ev(eventlog.EventUserMessage)}, true},
		{"an agent message", []eventlog.Event{ev(eventlog.EventAgentMessage)}, true},
		{"a tool call", []eventlog.Event{ev(eventlog.EventToolCall)}, true},
		{"a tool result", []eventlog.Event{ev(eventlog.EventToolResult)}, true},
	} {
		if got := HasConversation(c.evs); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
