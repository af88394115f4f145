package editor

import (
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// updates turns logged events back into the session/update notifications an
// editor shows. It keeps what it has announced, so a tool call is announced
// once (tool_call) and every later event about it is a tool_call_update.
type updates struct {
	// replay is set while loading a stored conversation: the user's own
	// messages are shown too, and live-only notifications are not.
	replay    bool
	announced map[string]bool // tool call ids already sent as tool_call
	source    string          // source of the turn in progress
	kids      *childView      // how the agent's children are shown (children.go); nil: not at all
}

func newUpdates(replay bool) *updates {
	return &updates{replay: replay, announced: map[string]bool{}}
}

// of is the notifications for one event, in order; none for an event an
// editor has no use for (state changes, markers, permissions, ...).
func (u *updates) of(e eventlog.Event) []sdk.SessionUpdate {
	if e.ChildID != "" && eventlog.IsChildEvent(e.Type) {
		if u.kids == nil {
			return nil
		}
		return u.kids.of(e)
	}
	switch e.Type {
	case eventlog.EventTurnStarted:
		u.source = e.Source
	case eventlog.EventUserMessage:
		// Live, the editor shows the prompt it sent itself; a continuation or
		// the initial prompt of a session started elsewhere is shown.
		if u.replay || u.source != eventlog.SourceUser {
			return one(sdk.UpdateUserMessageText(e.Content))
		}
	case eventlog.EventAgentMessage:
		return one(sdk.UpdateAgentMessageText(e.Content))
	case eventlog.EventAgentThought:
		return one(sdk.UpdateAgentThoughtText(e.Content))
	case eventlog.EventToolCall, eventlog.EventToolResult:
		return one(u.tool(e))
	case eventlog.EventPlan:
		var entries []sdk.PlanEntry
		if json.Unmarshal(e.Data, &entries) == nil {
			return one(sdk.UpdatePlan(entries...))
		}
	case eventlog.EventAgentUpdate:
		// What kandev keeps raw (available commands, mode changes, ...) is
		// passed through live; an echo of the user's text never is.
		var upd sdk.SessionUpdate
		if !u.replay && json.Unmarshal(e.Data, &upd) == nil && upd.UserMessageChunk == nil {
			return one(upd)
		}
	}
	return nil
}

func one(upd sdk.SessionUpdate) []sdk.SessionUpdate { return []sdk.SessionUpdate{upd} }

// tool is the notification for a tool_call or tool_result event. A result
// whose outcome is unknown (its owner died mid-call) is shown as failed
// with a note, since ACP has no status for "may or may not have happened".
func (u *updates) tool(e eventlog.Event) sdk.SessionUpdate {
	id := sdk.ToolCallId(e.ToolCallID)
	status := toolStatus(e.ToolStatus)
	content := e.Content
	if e.ToolStatus == "unknown" {
		content = "outcome unknown: kandev was stopped while this tool call ran"
	}
	var body []sdk.ToolCallContent
	if e.Type == eventlog.EventToolResult && content != "" {
		body = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(content))}
	}
	var input any
	if len(e.Input) > 0 {
		input = e.Input
	}
	if !u.announced[e.ToolCallID] {
		u.announced[e.ToolCallID] = true
		opts := []sdk.ToolCallStartOpt{sdk.WithStartStatus(status), sdk.WithStartKind(toolKind(e.ToolKind))}
		if input != nil {
			opts = append(opts, sdk.WithStartRawInput(input))
		}
		if body != nil {
			opts = append(opts, sdk.WithStartContent(body))
		}
		return sdk.StartToolCall(id, e.ToolName, opts...)
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if e.ToolName != "" {
		opts = append(opts, sdk.WithUpdateTitle(e.ToolName))
	}
	if body != nil {
		opts = append(opts, sdk.WithUpdateContent(body))
	}
	return sdk.UpdateToolCall(id, opts...)
}

func toolStatus(s string) sdk.ToolCallStatus {
	switch s {
	case "in_progress":
		return sdk.ToolCallStatusInProgress
	case "completed":
		return sdk.ToolCallStatusCompleted
	case "failed", "unknown":
		return sdk.ToolCallStatusFailed
	}
	return sdk.ToolCallStatusPending
}

func toolKind(k string) sdk.ToolKind {
	if k == "" {
		return sdk.ToolKindOther
	}
	return sdk.ToolKind(k)
}
