package acp

import (
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
)

// toolNames remembers each tool call's title so its result can name it.
type toolNames map[string]string

// updateToEvent turns the params of one session/update notification into a
// log event. It never fails: what kandev does not interpret is kept raw as
// an agent_update event, never misread.
func updateToEvent(params []byte, tools toolNames) *eventlog.Event {
	upd := gjson.GetBytes(params, "update")
	kind := upd.Get("sessionUpdate").String()
	switch kind {
	case "agent_message_chunk", "agent_thought_chunk":
		// The hot path of a streaming turn: read the text without decoding the rest.
		typ := eventlog.EventAgentMessage
		if kind == "agent_thought_chunk" {
			typ = eventlog.EventAgentThought
		}
		c := upd.Get("content")
		text := c.Get("text").String()
		if c.Get("type").String() != "text" {
			text = "[" + c.Get("type").String() + " content]"
		}
		return &eventlog.Event{Type: typ, Role: "assistant", Content: text}
	case "tool_call":
		var tc sdk.SessionUpdateToolCall
		if json.Unmarshal([]byte(upd.Raw), &tc) != nil {
			break
		}
		id := string(tc.ToolCallId)
		tools[id] = tc.Title
		status := string(tc.Status)
		if status == "" {
			status = "pending"
		}
		if status == "completed" || status == "failed" {
			return &eventlog.Event{Type: eventlog.EventToolResult, ToolName: tc.Title, ToolCallID: id, ToolStatus: status,
				ToolKind: string(tc.Kind), Content: toolContentText(tc.Content, tc.RawOutput), Input: rawJSON(tc.RawInput)}
		}
		return &eventlog.Event{Type: eventlog.EventToolCall, ToolName: tc.Title, ToolCallID: id, ToolStatus: status,
			ToolKind: string(tc.Kind), Input: rawJSON(tc.RawInput)}
	case "tool_call_update":
		var tu sdk.SessionToolCallUpdate
		if json.Unmarshal([]byte(upd.Raw), &tu) != nil {
			break
		}
		id := string(tu.ToolCallId)
		if tu.Title != nil && *tu.Title != "" {
			tools[id] = *tu.Title
		}
		name := tools[id]
		status := ""
		if tu.Status != nil {
			status = string(*tu.Status)
		}
		kindStr := ""
		if tu.Kind != nil {
			kindStr = string(*tu.Kind)
		}
		out := terminalOutput(upd)
		if status == "completed" || status == "failed" {
			text := toolContentText(tu.Content, tu.RawOutput)
			if out != "" && toolContentText(tu.Content, nil) == "" {
				text = out
			}
			return &eventlog.Event{Type: eventlog.EventToolResult, ToolName: name, ToolCallID: id, ToolStatus: status,
				ToolKind: kindStr, Content: text}
		}
		return &eventlog.Event{Type: eventlog.EventToolCall, ToolName: name, ToolCallID: id, ToolStatus: status,
			ToolKind: kindStr, Input: rawJSON(tu.RawInput), Content: out}
	case "usage_update":
		if e := usageEvent(upd.Raw); e != nil {
			return e
		}
	case "plan":
		return &eventlog.Event{Type: eventlog.EventPlan, Data: json.RawMessage(upd.Get("entries").Raw)}
	case "user_message_chunk":
		// Only seen in replays (filtered out) or as an echo of what kandev
		// already logged as user_message: kept raw so it is not counted twice.
	}
	raw := upd.Raw
	if raw == "" {
		raw = string(params)
	}
	return &eventlog.Event{Type: eventlog.EventAgentUpdate, Data: json.RawMessage(raw)}
}

// terminalOutput is the command output a tool call update carries in its
// _meta, as codex-acp 2.x sends it to a client without terminals: a chunk
// in terminal_output_delta (or terminal_output, Zed's key), each {data,
// terminal_id}. The output of a command that did not stream comes once, in
// its completion.
func terminalOutput(upd gjson.Result) string {
	if d := upd.Get("_meta.terminal_output_delta.data"); d.Exists() {
		return d.String()
	}
	return upd.Get("_meta.terminal_output.data").String()
}

// RequestedToolCall is the tool call a permission request names, as it is
// logged when the agent asks before it announced the call (Gemini CLI).
func RequestedToolCall(turnID string, req sdk.RequestPermissionRequest) *eventlog.Event {
	e := &eventlog.Event{Type: eventlog.EventToolCall, TurnID: turnID, ToolCallID: string(req.ToolCall.ToolCallId),
		ToolStatus: "pending", Input: rawJSON(req.ToolCall.RawInput)}
	if req.ToolCall.Title != nil {
		e.ToolName = *req.ToolCall.Title
	}
	if req.ToolCall.Kind != nil {
		e.ToolKind = string(*req.ToolCall.Kind)
	}
	return e
}

func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// toolContentText flattens tool call content to text for the log.
func toolContentText(content []sdk.ToolCallContent, rawOutput any) string {
	var b strings.Builder
	for _, c := range content {
		switch {
		case c.Content != nil && c.Content.Content.Text != nil:
			b.WriteString(c.Content.Content.Text.Text)
		case c.Diff != nil:
			b.WriteString("diff " + c.Diff.Path)
		case c.Terminal != nil:
			b.WriteString("terminal " + c.Terminal.TerminalId)
		default:
			continue
		}
		b.WriteByte('\n')
	}
	if b.Len() == 0 && rawOutput != nil {
		if s, ok := rawOutput.(string); ok {
			return s
		}
		out, _ := json.Marshal(rawOutput)
		return string(out)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// usageEvent turns a usage_update (the agent's context window and its
// cumulative cost) into a usage event; nil when it does not decode.
func usageEvent(raw string) *eventlog.Event {
	var u sdk.SessionUsageUpdate
	if json.Unmarshal([]byte(raw), &u) != nil {
		return nil
	}
	used, size := int64(u.Used), int64(u.Size)
	e := &eventlog.Event{Type: eventlog.EventUsage, Used: &used, Size: &size}
	if u.Cost != nil {
		e.Cost = &eventlog.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
	}
	return e
}

// promptUsageEvent is the usage event of a prompt response's token counts.
func promptUsageEvent(u *sdk.Usage) *eventlog.Event {
	t := eventlog.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), Total: int64(u.TotalTokens)}
	for _, f := range []struct {
		from *int
		to   *int64
	}{{u.CachedReadTokens, &t.CachedRead}, {u.CachedWriteTokens, &t.CachedWrite}, {u.ThoughtTokens, &t.Thought}} {
		if f.from != nil {
			*f.to = int64(*f.from)
		}
	}
	return &eventlog.Event{Type: eventlog.EventUsage, Tokens: &t}
}
