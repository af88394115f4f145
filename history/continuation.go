package history

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// maxContinuationInputBytes bounds the input summary of each listed tool call.
const maxContinuationInputBytes = 200

// BuildContinuationPrompt returns the durable prompt that continues an
// interrupted turn (see docs/resume.md). It says that kandev was stopped before the turn
// ended, lists the tool calls whose outcome is unknown (name, id and a short,
// redacted summary of the input; each id once, in the given order), and asks
// the agent to inspect the current state before repeating any action, then
// continue. The text depends only on unknownTools (tool_call events, or their
// tool_result events).
func BuildContinuationPrompt(unknownTools []eventlog.Event) string {
	return continuationPrompt(unknownTools, "")
}

// BuildContinuationPromptQuoting is BuildContinuationPrompt for an agent
// that cannot be shown to hold the interrupted request (its restore did not
// replay it): the request is quoted, each line behind "> " (so that no line
// of it reads as a new instruction), and the agent is asked to check what it
// already did for it before acting. The whole prompt is at most maxBytes
// (<= 0: DefaultMaxReplayBytes), as the resume context is: a longer request
// is cut on a UTF-8 boundary and says that kandev transcript <sessionID>
// shows it whole. An empty request gives BuildContinuationPrompt's text.
func BuildContinuationPromptQuoting(unknownTools []eventlog.Event, request, sessionID string, maxBytes int) string {
	request = strings.TrimSpace(request)
	if request == "" {
		return BuildContinuationPrompt(unknownTools)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxReplayBytes
	}
	quote := quoteLines(request)
	frame := len(continuationPrompt(unknownTools, "-"))
	if frame+len(quote) > maxBytes {
		note := "\n> [truncated: kandev transcript " + sessionID + " shows the whole request]"
		quote = cutUTF8(quote, maxBytes-frame-len(note)) + note
	}
	return continuationPrompt(unknownTools, quote)
}

// quoteLines puts "> " before every line of s.
func quoteLines(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}

// continuationPrompt renders the continuation; quote is the quoted request
// ("" for none).
func continuationPrompt(unknownTools []eventlog.Event, quote string) string {
	var b strings.Builder
	b.WriteString("The previous turn was interrupted: kandev was stopped before the turn ended, so your last response may be incomplete")
	if quote != "" {
		b.WriteString(", or you may not have started on it at all. The interrupted request was:\n\n")
		b.WriteString(quote)
		b.WriteString("\n\n")
	} else {
		b.WriteString(".\n\n")
	}
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
	if quote != "" {
		b.WriteString("\nBefore acting, check what you already did for this request: inspect the current state (files, running processes, command output) " +
			"to find out what already happened, and do not repeat work that was already completed. Then carry the request out from where it stopped.")
		return b.String()
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
