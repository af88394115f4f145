package history

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/state"
)

// maxContinuationInputBytes bounds the input summary of each listed tool call.
const maxContinuationInputBytes = 200

// BuildContinuationPrompt returns the durable prompt that continues an
// interrupted turn (SPEC 3.4). It says that kandev was stopped before the turn
// ended, lists the tool calls whose outcome is unknown (name, id and a short,
// redacted summary of the input; each id once, in the given order), and asks
// the agent to inspect the current state before repeating any action, then
// continue. The text depends only on unknownTools (tool_call events, or their
// tool_result events).
func BuildContinuationPrompt(unknownTools []state.Event) string {
	var b strings.Builder
	b.WriteString("The previous turn was interrupted: kandev was stopped before the turn ended, so your last response may be incomplete.\n\n")
	seen := map[string]bool{}
	listed := 0
	for _, e := range unknownTools {
		if e.ToolCallID != "" && seen[e.ToolCallID] {
			continue
		}
		seen[e.ToolCallID] = true
		if listed == 0 {
			b.WriteString("These tool calls were started but their outcome is unknown (the action may or may not have happened):\n")
		}
		listed++
		b.WriteString("- ")
		b.WriteString(toolNameForReplay(e.ToolName))
		if e.ToolCallID != "" {
			b.WriteString(" (id " + e.ToolCallID + ")")
		}
		if in := inputSummary(e.Input); in != "" {
			b.WriteString(": " + in)
		}
		b.WriteByte('\n')
	}
	if listed == 0 {
		b.WriteString("No tool call was left without a result.\n")
	}
	b.WriteString("\nBefore repeating any action, inspect the current state (files, running processes, command output) " +
		"to find out what already happened. Then continue the task from where it stopped.")
	return b.String()
}

// inputSummary renders a tool input as one short line of compact, redacted JSON.
func inputSummary(input json.RawMessage) string {
	input = redactJSON(input)
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		return capUTF8(strings.Join(strings.Fields(string(input)), " "), maxContinuationInputBytes)
	}
	s := b.String()
	if s == "null" || s == "{}" || s == `""` {
		return ""
	}
	return capUTF8(s, maxContinuationInputBytes)
}
