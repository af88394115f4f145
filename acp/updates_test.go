package acp

import "testing"

// BenchmarkUpdateToEvent is the per-update cost of a streamed turn before
// the log write: one agent_message_chunk notification to one event.
func BenchmarkUpdateToEvent(b *testing.B) {
	params := []byte(`{"sessionId":"demo-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk 4242\n"}}}`)
	tools := toolNames{}
	b.ReportAllocs()
	for b.Loop() {
		if e := updateToEvent(params, tools); e.Content != "chunk 4242\n" {
			b.Fatal(e.Content)
		}
	}
}

// codex-acp 2.x sends a command's output in _meta.terminal_output_delta, not
// in content: a streamed chunk on an in-progress update, or all of it on the
// completion; text content, when there is some, stays what is recorded.
func TestUpdateToEvent_TakesACommandsOutputFromTerminalOutputMeta(t *testing.T) {
	for _, tc := range []struct {
		name, update, typ, content string
	}{
		{"completion with the output in _meta",
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","_meta":{"terminal_output_delta":{"data":"TOOL-OUTPUT-42\n","terminal_id":"c1"},"terminal_exit":{"exit_code":0}}}`,
			"tool_result", "TOOL-OUTPUT-42\n"},
		{"Zed's key",
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","_meta":{"terminal_output":{"data":"out","terminal_id":"c1"}}}`,
			"tool_result", "out"},
		{"a streamed chunk",
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","_meta":{"terminal_output_delta":{"data":"chunk","terminal_id":"c1"}}}`,
			"tool_call", "chunk"},
		{"text content wins",
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"from content"}}],"_meta":{"terminal_output_delta":{"data":"meta","terminal_id":"c1"}}}`,
			"tool_result", "from content"},
		{"no output: rawOutput as before",
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":{"exit_code":0}}`,
			"tool_result", `{"exit_code":0}`},
	} {
		e := updateToEvent([]byte(`{"sessionId":"s","update":`+tc.update+`}`), toolNames{})
		if string(e.Type) != tc.typ || e.Content != tc.content {
			t.Errorf("%s: %s %q, want %s %q", tc.name, e.Type, e.Content, tc.typ, tc.content)
		}
	}
}

// After its answer to session/load, what re-tells the conversation is the
// load's late replay (dropped); the agent's state now is still recorded.
func TestIsConversation_TellsALateReplayFromTheAgentsStateNow(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want bool
	}{
		{"user_message_chunk", true},
		{"agent_message_chunk", true},
		{"agent_thought_chunk", true},
		{"tool_call", true},
		{"tool_call_update", true},
		{"plan", true},
		{"subagent_update", true},
		{"session_message", true},
		{"async_task_state_update", true},
		{"available_commands_update", false},
		{"current_mode_update", false},
		{"config_option_update", false},
		{"usage_update", false},
		{"session_info_update", false},
		{"", false},
	} {
		params := []byte(`{"sessionId":"s","update":{"sessionUpdate":"` + tc.kind + `"}}`)
		if got := isConversation(params); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.kind, got, tc.want)
		}
	}
}
