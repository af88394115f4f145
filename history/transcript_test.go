package history

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

func TestAssemble_MatchesGolden(t *testing.T) {
	for _, name := range []string{"basic", "interrupted"} {
		t.Run(name, func(t *testing.T) {
			entries := Assemble(readEvents(t, "transcript/"+name+".events.jsonl"))
			js, err := json.MarshalIndent(entries, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "transcript/"+name+".entries.json", append(js, '\n'))
			checkGolden(t, "transcript/"+name+".txt", []byte(RenderText(entries)))
		})
	}
}

// wantEntry is an expected transcript entry, written compactly.
type wantEntry struct {
	start, seq int64
	role       string
	source     string
	parts      []Part
}

func TestAssemble_FollowsTheFoldingRules(t *testing.T) {
	in := json.RawMessage(`{"path":"a.txt"}`)
	in2 := json.RawMessage(`{"path":"b.txt"}`)
	cases := []struct {
		name   string
		events []eventlog.Event
		want   []wantEntry
	}{
		{
			name: "chunks of a turn concatenate",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "Hel"},
				{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "lo"},
			},
			want: []wantEntry{{1, 2, RoleAssistant, "", []Part{{Type: PartText, Text: "Hello"}}}},
		},
		{
			name: "a new turn starts a new message",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t1", Content: "one"},
				{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t2", Content: "two"},
			},
			want: []wantEntry{
				{1, 1, RoleAssistant, "", []Part{{Type: PartText, Text: "one"}}},
				{2, 2, RoleAssistant, "", []Part{{Type: PartText, Text: "two"}}},
			},
		},
		{
			name: "other events end the message and are not shown",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "before"},
				{Seq: 2, Type: eventlog.EventPlan, TurnID: "t"},
				{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "after"},
				{Seq: 4, Type: eventlog.EventPermissionRequest, TurnID: "t"},
				{Seq: 5, Type: eventlog.EventState, State: "RUNNING"},
			},
			want: []wantEntry{
				{1, 1, RoleAssistant, "", []Part{{Type: PartText, Text: "before"}}},
				{3, 3, RoleAssistant, "", []Part{{Type: PartText, Text: "after"}}},
			},
		},
		{
			name: "thoughts go into the reasoning part in order",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentThought, TurnID: "t", Content: "think "},
				{Seq: 2, Type: eventlog.EventAgentThought, TurnID: "t", Content: "more"},
				{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "answer"},
			},
			want: []wantEntry{{1, 3, RoleAssistant, "", []Part{{Type: PartReasoning, Text: "think more"}, {Type: PartText, Text: "answer"}}}},
		},
		{
			name: "call and result join by id",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "reading"},
				{Seq: 2, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", ToolName: "Read", Input: in},
				{Seq: 3, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "c1", ToolStatus: "completed", Content: "data"},
				{Seq: 4, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "done"},
			},
			want: []wantEntry{{1, 4, RoleAssistant, "", []Part{
				{Type: PartText, Text: "reading"},
				{Type: PartTool, ToolCallID: "c1", ToolName: "Read", State: ToolOutputAvailable, Input: in, Output: "data"},
				{Type: PartText, Text: "done"},
			}}},
		},
		{
			name: "result without a call gets a placeholder call",
			events: []eventlog.Event{
				{Seq: 5, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "c9", ToolName: "ls", ToolStatus: "failed", Content: "boom"},
			},
			want: []wantEntry{{5, 5, RoleAssistant, "", []Part{{Type: PartTool, ToolCallID: "c9", ToolName: "ls", State: ToolOutputError, Output: "boom"}}}},
		},
		{
			name: "a later call update fills the empty input and name without ending the message",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", ToolStatus: "pending"},
				{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "a"},
				{Seq: 3, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", ToolName: "Read a.txt", Input: in, ToolStatus: "in_progress"},
				{Seq: 4, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "b"},
				{Seq: 5, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", Input: json.RawMessage(`{}`)},
			},
			want: []wantEntry{{1, 5, RoleAssistant, "", []Part{
				{Type: PartTool, ToolCallID: "c1", ToolName: "Read a.txt", State: ToolInputAvailable, Input: in},
				{Type: PartText, Text: "ab"},
			}}},
		},
		{
			name: "a newer non-empty input replaces the older one",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", ToolName: "Read", Input: in},
				{Seq: 2, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", Input: in2, ToolStatus: "completed"},
			},
			want: []wantEntry{{1, 2, RoleAssistant, "", []Part{{Type: PartTool, ToolCallID: "c1", ToolName: "Read", State: ToolOutputAvailable, Input: in2}}}},
		},
		{
			name: "tool states",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "ok", ToolName: "a"},
				{Seq: 2, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "bad", ToolName: "b"},
				{Seq: 3, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "lost", ToolName: "c"},
				{Seq: 4, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "open", ToolName: "d"},
				{Seq: 5, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "ok", ToolStatus: "completed"},
				{Seq: 6, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "bad", ToolStatus: "failed"},
				{Seq: 7, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "lost", ToolStatus: "unknown"},
				{Seq: 8, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "ok", ToolStatus: "in_progress"},
			},
			want: []wantEntry{{1, 8, RoleAssistant, "", []Part{
				{Type: PartTool, ToolCallID: "ok", ToolName: "a", State: ToolOutputAvailable},
				{Type: PartTool, ToolCallID: "bad", ToolName: "b", State: ToolOutputError},
				{Type: PartTool, ToolCallID: "lost", ToolName: "c", State: ToolOutputUnknown},
				{Type: PartTool, ToolCallID: "open", ToolName: "d", State: ToolInputAvailable},
			}}},
		},
		{
			name: "a late result joins the earlier message across a marker",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventToolCall, TurnID: "t", ToolCallID: "c1", ToolName: "Run"},
				{Seq: 2, Type: eventlog.EventMarker, Kind: "prompt_interrupted", Severity: "warning", Summary: "Interrupted."},
				{Seq: 3, Type: eventlog.EventToolResult, TurnID: "t", ToolCallID: "c1", ToolStatus: "unknown"},
			},
			want: []wantEntry{
				{1, 3, RoleAssistant, "", []Part{{Type: PartTool, ToolCallID: "c1", ToolName: "Run", State: ToolOutputUnknown}}},
				{2, 2, RoleSystem, "", []Part{{Type: PartMarker, Kind: "prompt_interrupted", Severity: "warning", Text: "Interrupted."}}},
			},
		},
		{
			name: "markers are their own entries and end the message",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "a"},
				{Seq: 2, Type: eventlog.EventMarker, Kind: "provider_failure", Severity: "error", Summary: "Rate limited."},
				{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "b"},
			},
			want: []wantEntry{
				{1, 1, RoleAssistant, "", []Part{{Type: PartText, Text: "a"}}},
				{2, 2, RoleSystem, "", []Part{{Type: PartMarker, Kind: "provider_failure", Severity: "error", Text: "Rate limited."}}},
				{3, 3, RoleAssistant, "", []Part{{Type: PartText, Text: "b"}}},
			},
		},
		{
			name: "an event of an unknown type is its own entry and ends the message",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "before"},
				{Seq: 2, Type: "hologram", TurnID: "t", Content: "from a newer kandev"},
				{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "after"},
			},
			want: []wantEntry{
				{1, 1, RoleAssistant, "", []Part{{Type: PartText, Text: "before"}}},
				{2, 2, RoleSystem, "", []Part{{Type: PartUnknown, Kind: "hologram", Text: "unknown event hologram"}}},
				{3, 3, RoleAssistant, "", []Part{{Type: PartText, Text: "after"}}},
			},
		},
		{
			name: "empty and blank text is dropped",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventUserMessage, Content: "  \n"},
				{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t", Content: ""},
				{Seq: 3, Type: eventlog.EventAgentMessage, TurnID: "t", Content: " \n "},
				{Seq: 4, Type: eventlog.EventTurnEnded, TurnID: "t"},
				{Seq: 5, Type: eventlog.EventAgentThought, TurnID: "u", Content: "\n"},
				{Seq: 6, Type: eventlog.EventToolCall, TurnID: "u", ToolCallID: "c", ToolName: "x"},
			},
			want: []wantEntry{{5, 6, RoleAssistant, "", []Part{{Type: PartTool, ToolCallID: "c", ToolName: "x", State: ToolInputAvailable}}}},
		},
		{
			name: "user messages inherit their turn's source",
			events: []eventlog.Event{
				{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t1", Source: eventlog.SourceUser},
				{Seq: 2, Type: eventlog.EventUserMessage, TurnID: "t1", Content: "hi"},
				{Seq: 3, Type: eventlog.EventUserMessage, TurnID: "t2", Content: "continue please"},
				{Seq: 4, Type: eventlog.EventTurnStarted, TurnID: "t2", Source: eventlog.SourceContinuation},
				{Seq: 5, Type: eventlog.EventTurnStarted, TurnID: "t3", Source: eventlog.SourceQueued},
				{Seq: 6, Type: eventlog.EventUserMessage, TurnID: "t3", Content: "queued one"},
			},
			want: []wantEntry{
				{2, 2, RoleUser, "", []Part{{Type: PartText, Text: "hi"}}},
				{3, 3, RoleUser, "continuation", []Part{{Type: PartText, Text: "continue please"}}},
				{6, 6, RoleUser, "queued", []Part{{Type: PartText, Text: "queued one"}}},
			},
		},
		{
			name: "events are taken in seq order",
			events: []eventlog.Event{
				{Seq: 2, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "lo"},
				{Seq: 1, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "Hel"},
			},
			want: []wantEntry{{1, 2, RoleAssistant, "", []Part{{Type: PartText, Text: "Hello"}}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Assemble(c.events)
			var want []Entry
			for _, w := range c.want {
				want = append(want, Entry{StartSequence: w.start, Sequence: w.seq, Message: Message{
					ID: "msg-" + strconv.FormatInt(w.start, 10), Role: w.role, Source: w.source, Parts: w.parts,
				}})
			}
			gotJS, _ := json.MarshalIndent(got, "", "  ")
			wantJS, _ := json.MarshalIndent(want, "", "  ")
			if string(gotJS) != string(wantJS) {
				t.Errorf("got\n%s\nwant\n%s", gotJS, wantJS)
			}
		})
	}
}

func TestAssemble_DoesNotReorderCallersSlice(t *testing.T) {
	events := []eventlog.Event{{Seq: 2, Type: eventlog.EventUserMessage, Content: "b"}, {Seq: 1, Type: eventlog.EventUserMessage, Content: "a"}}
	Assemble(events)
	if events[0].Seq != 2 {
		t.Error("Assemble sorted the caller's slice")
	}
}

func TestAssemble_NoEventsGivesNoEntries(t *testing.T) {
	if got := Assemble(nil); len(got) != 0 {
		t.Errorf("got %v", got)
	}
}

func TestAssemble_StartSequenceStrictlyIncreases(t *testing.T) {
	for _, name := range []string{"basic", "interrupted"} {
		entries := Assemble(readEvents(t, "transcript/"+name+".events.jsonl"))
		for i := 1; i < len(entries); i++ {
			if entries[i].StartSequence <= entries[i-1].StartSequence {
				t.Errorf("%s: entry %d starts at %d after %d", name, i, entries[i].StartSequence, entries[i-1].StartSequence)
			}
		}
	}
}

// Eight times the chunks take at most about eight times as long (a copy of
// the text so far per chunk would take sixty-four): ratios of two sizes in
// one run, not a time limit, so a slow machine or the race detector does not
// fail it.
func TestAssemble_ManyChunksCostLinearTime(t *testing.T) {
	skipUnderRace(t)
	timed := func(n int) time.Duration {
		events := make([]eventlog.Event, n)
		for i := range events {
			events[i] = eventlog.Event{Seq: int64(i + 1), Type: eventlog.EventAgentMessage, TurnID: "t", Content: "chunk "}
		}
		return perRun(func() {
			entries := Assemble(events)
			if len(entries) != 1 || len(entries[0].Message.Parts[0].Text) != n*len("chunk ") || entries[0].Sequence != int64(n) {
				t.Fatalf("%d chunks: got %d entries", n, len(entries))
			}
		})
	}
	ratio, small, big := bestRatio(16, func() time.Duration { return timed(37_500) }, func() time.Duration { return timed(300_000) })
	t.Logf("37,500 chunks: %v, 300,000: %v", small, big)
	if ratio > 16 {
		t.Errorf("8x the chunks took %.1fx as long (%v against %v): not linear", ratio, big, small)
	}
}
