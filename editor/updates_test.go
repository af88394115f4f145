package editor

import (
	"encoding/json"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// kinds names each update the way ACP does on the wire.
func kinds(t *testing.T, u *updates, evs []eventlog.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		for _, up := range u.of(e) {
			b, err := json.Marshal(up)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			json.Unmarshal(b, &v)
			s := v["sessionUpdate"].(string)
			if st, ok := v["status"].(string); ok {
				s += ":" + st
			}
			if c, ok := v["content"].(map[string]any); ok {
				s += ":" + c["text"].(string)
			}
			out = append(out, s)
		}
	}
	return out
}

func TestUpdates_EventsBecomeTheACPUpdatesAnEditorShows(t *testing.T) {
	turn := eventlog.Event{Type: eventlog.EventTurnStarted, Source: eventlog.SourceUser}
	user := eventlog.Event{Type: eventlog.EventUserMessage, Content: "hi"}
	call := eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "c1", ToolName: "read a", ToolKind: "read", ToolStatus: "pending"}
	progress := eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "c1", ToolStatus: "in_progress"}
	result := eventlog.Event{Type: eventlog.EventToolResult, ToolCallID: "c1", ToolStatus: "completed", Content: "text"}
	cases := []struct {
		name   string
		replay bool
		evs    []eventlog.Event
		want   []string
	}{
		{"agent text is a message chunk", false, []eventlog.Event{{Type: eventlog.EventAgentMessage, Content: "a"}}, []string{"agent_message_chunk:a"}},
		{"a thought is a thought chunk", false, []eventlog.Event{{Type: eventlog.EventAgentThought, Content: "t"}}, []string{"agent_thought_chunk:t"}},
		{"live, the editor's own prompt is not echoed", false, []eventlog.Event{turn, user}, nil},
		{"replayed, the user's prompt is shown", true, []eventlog.Event{turn, user}, []string{"user_message_chunk:hi"}},
		{"live, a continuation's prompt is shown", false, []eventlog.Event{{Type: eventlog.EventTurnStarted, Source: eventlog.SourceContinuation}, user}, []string{"user_message_chunk:hi"}},
		{"a tool call is announced once, then updated", false, []eventlog.Event{call, progress, result}, []string{"tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"}},
		{"a result never announced starts the call", true, []eventlog.Event{result}, []string{"tool_call:completed"}},
		{"an unknown outcome is a failure", true, []eventlog.Event{call, {Type: eventlog.EventToolResult, ToolCallID: "c1", ToolStatus: "unknown"}}, []string{"tool_call:pending", "tool_call_update:failed"}},
		{"a plan is a plan", false, []eventlog.Event{{Type: eventlog.EventPlan, Data: json.RawMessage(`[{"content":"x","priority":"high","status":"pending"}]`)}}, []string{"plan"}},
		{"raw agent updates pass through live", false, []eventlog.Event{{Type: eventlog.EventAgentUpdate, Data: json.RawMessage(`{"sessionUpdate":"available_commands_update","availableCommands":[]}`)}}, []string{"available_commands_update"}},
		{"raw agent updates are not replayed", true, []eventlog.Event{{Type: eventlog.EventAgentUpdate, Data: json.RawMessage(`{"sessionUpdate":"available_commands_update","availableCommands":[]}`)}}, nil},
		{"an echoed user chunk never passes", false, []eventlog.Event{{Type: eventlog.EventAgentUpdate, Data: json.RawMessage(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"x"}}`)}}, nil},
		{"bookkeeping is not shown", true, []eventlog.Event{{Type: eventlog.EventState, State: "RUNNING"}, {Type: eventlog.EventMarker, Summary: "m"}, {Type: eventlog.EventPermissionRequest}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := kinds(t, newUpdates(c.replay), c.evs)
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}
