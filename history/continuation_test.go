package history

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
)

func TestBuildContinuationPrompt_MatchesGolden(t *testing.T) {
	unknown := []eventlog.Event{
		{Type: eventlog.EventToolCall, ToolName: "Run ./migrate.sh", ToolCallID: "call-7",
			Input: json.RawMessage(`{
				"command": "./migrate.sh --password hunter2",
				"cwd": "/srv/app"
			}`)},
		{Type: eventlog.EventToolCall, ToolName: "Edit\nconfig.yaml", ToolCallID: "call-8",
			Input: json.RawMessage(`{"path":"config.yaml","new_text":"` + strings.Repeat("x", 300) + `"}`)},
		{Type: eventlog.EventToolResult, ToolName: "Run ./migrate.sh", ToolCallID: "call-7", ToolStatus: "unknown"},
		{Type: eventlog.EventToolResult, ToolName: "Fetch https://example.com", ToolCallID: "call-9", ToolStatus: "unknown"},
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
	tools := []eventlog.Event{{ToolName: "a", ToolCallID: "1", Input: json.RawMessage(`{"b":1,"a":2}`)}}
	first, second := BuildContinuationPrompt(tools), BuildContinuationPrompt(tools)
	if first != second {
		t.Fatal("two calls differ")
	}
	if !strings.Contains(BuildContinuationPrompt(tools), `- a (id 1): {"b":1,"a":2}`) {
		t.Errorf("input summary does not keep key order:\n%s", BuildContinuationPrompt(tools))
	}
}

func TestBuildContinuationPromptQuoting_QuotesTheInterruptedRequestLineByLine(t *testing.T) {
	got := BuildContinuationPromptQuoting(nil, "remember KIWI\n/sleep 20000", "s1", 0)
	if !strings.Contains(got, "The interrupted request was:\n\n> remember KIWI\n> /sleep 20000\n\n") {
		t.Fatalf("request not quoted line by line:\n%s", got)
	}
	if !strings.Contains(got, "check what you already did for this request") {
		t.Fatalf("does not ask the agent to check what it already did:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "/sleep") {
			t.Fatalf("a line of the request reads as the agent's own instruction: %q", line)
		}
	}
	if BuildContinuationPromptQuoting(nil, "  ", "s1", 0) != BuildContinuationPrompt(nil) {
		t.Fatal("an empty request changes the continuation")
	}
}

func TestBuildContinuationPromptQuoting_IsBoundedLikeTheResumeContext(t *testing.T) {
	request := strings.Repeat("é", 200000) // 400,000 bytes, two per rune
	for _, max := range []int{0, 4096, 1001} {
		got := BuildContinuationPromptQuoting(nil, request, "s1", max)
		limit := max
		if limit <= 0 {
			limit = DefaultMaxReplayBytes
		}
		if len(got) > limit {
			t.Fatalf("max %d: %d bytes", max, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("max %d: a rune was split", max)
		}
		if !strings.Contains(got, "[truncated: kandev transcript s1 shows the whole request]") || !strings.Contains(got, "check what you already did") {
			t.Fatalf("max %d: the cut is not said, or the instructions were cut:\n%.300s", max, got)
		}
	}
}
