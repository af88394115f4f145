package history

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/state"
)

func TestBuildContinuationPrompt_MatchesGolden(t *testing.T) {
	unknown := []state.Event{
		{Type: state.EventToolCall, ToolName: "Run ./migrate.sh", ToolCallID: "call-7",
			Input: json.RawMessage(`{
				"command": "./migrate.sh --password hunter2",
				"cwd": "/srv/app"
			}`)},
		{Type: state.EventToolCall, ToolName: "Edit\nconfig.yaml", ToolCallID: "call-8",
			Input: json.RawMessage(`{"path":"config.yaml","new_text":"` + strings.Repeat("x", 300) + `"}`)},
		{Type: state.EventToolResult, ToolName: "Run ./migrate.sh", ToolCallID: "call-7", ToolStatus: "unknown"},
		{Type: state.EventToolResult, ToolName: "Fetch https://example.com", ToolCallID: "call-9", ToolStatus: "unknown"},
	}
	checkGolden(t, "continuation_prompt.golden", []byte(BuildContinuationPrompt(unknown)))
}

func TestBuildContinuationPrompt_WithoutUnknownTools(t *testing.T) {
	got := BuildContinuationPrompt(nil)
	checkGolden(t, "continuation_prompt_no_tools.golden", []byte(got))
	if strings.Contains(got, "outcome is unknown") {
		t.Error("lists tool calls although there are none")
	}
}

func TestBuildContinuationPrompt_IsDeterministic(t *testing.T) {
	tools := []state.Event{{ToolName: "a", ToolCallID: "1", Input: json.RawMessage(`{"b":1,"a":2}`)}}
	first, second := BuildContinuationPrompt(tools), BuildContinuationPrompt(tools)
	if first != second {
		t.Fatal("two calls differ")
	}
	if !strings.Contains(BuildContinuationPrompt(tools), `- a (id 1): {"b":1,"a":2}`) {
		t.Errorf("input summary does not keep key order:\n%s", BuildContinuationPrompt(tools))
	}
}
