package editor

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// An agent's children (subagents, background tasks) are shown to an editor
// as the editor declared: one that declared clientCapabilities.subagents
// gets each child as a session of its own in the subagents RFD form (the
// parent's subagent_update, the child's prompt as a session_message, the
// child's updates under its own session id); any other gets the child
// folded into one "Agent" tool call of the parent, whose content is the
// child's text, as Claude's adapter shows a subagent to such a client.

// childView turns child events into what the editor is shown.
type childView struct {
	declared bool
	// toChild sends an update the SDK types to a child session; raw sends
	// one it does not (session id, update).
	toChild func(child string, u sdk.SessionUpdate)
	raw     func(session string, update map[string]any)
	// seen is told of each child session the editor is shown, once.
	seen   func(child string)
	parent string
	text   map[string]*strings.Builder // folded: each child's text so far
	names  map[string]string
	tools  map[string]*updates // declared: each child's tool calls announced
	shown  map[string]bool     // declared: the child sessions shown so far
}

// of is the parent's updates for child event e; in the declared form the
// child's own are sent at once and none is returned.
func (v *childView) of(e eventlog.Event) []sdk.SessionUpdate {
	if v.text == nil {
		v.text, v.names, v.tools, v.shown = map[string]*strings.Builder{}, map[string]string{}, map[string]*updates{}, map[string]bool{}
	}
	if v.declared {
		v.declaredForm(e)
		return nil
	}
	return v.folded(e)
}

func (v *childView) folded(e eventlog.Event) []sdk.SessionUpdate {
	id := sdk.ToolCallId("kandev-child-" + e.ChildID)
	b := v.text[e.ChildID]
	if b == nil {
		b = &strings.Builder{}
		v.text[e.ChildID] = b
	}
	switch e.Type {
	case eventlog.EventChildStarted:
		name := spawnName(e)
		v.names[e.ChildID] = name
		return one(sdk.StartToolCall(id, "Agent: "+name, sdk.WithStartKind(sdk.ToolKindThink), sdk.WithStartStatus(sdk.ToolCallStatusInProgress)))
	case eventlog.EventChildMessage:
		if e.Role != "user" && e.Source != "reply" {
			b.WriteString(e.Content)
		}
	case eventlog.EventChildToolCall:
		if e.ToolName != "" {
			b.WriteString("\n[" + e.ToolName + "]\n")
		}
	case eventlog.EventChildEnded:
		status := sdk.ToolCallStatusCompleted
		if e.State != "completed" {
			status = sdk.ToolCallStatusFailed
			b.WriteString("\n(" + e.State + ")")
		}
		body := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.TrimSpace(b.String())))}
		return one(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(status), sdk.WithUpdateContent(body)))
	}
	return nil
}

func (v *childView) declaredForm(e eventlog.Event) {
	c := e.ChildID
	if !v.shown[c] {
		v.shown[c] = true
		if v.seen != nil {
			v.seen(c)
		}
	}
	switch e.Type {
	case eventlog.EventChildStarted:
		var s struct{ Name, Task string }
		_ = json.Unmarshal(e.Data, &s)
		v.raw(v.parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": c, "title": s.Name, "description": s.Task,
			"state": map[string]any{"state": "running"}})
	case eventlog.EventChildMessage:
		switch {
		case e.Role == "user":
			v.raw(c, map[string]any{"sessionUpdate": "session_message", "messageId": firstNonEmpty(e.ToolCallID, c+":prompt"),
				"senderSessionId": v.parent, "recipientSessionId": c, "content": []any{map[string]any{"type": "text", "text": e.Content}}})
		case e.Source != "reply":
			v.toChild(c, sdk.UpdateAgentMessageText(e.Content))
		}
	case eventlog.EventChildThought:
		v.toChild(c, sdk.UpdateAgentThoughtText(e.Content))
	case eventlog.EventChildToolCall, eventlog.EventChildToolResult:
		u := v.tools[c]
		if u == nil {
			u = newUpdates(false)
			v.tools[c] = u
		}
		e.Type = map[string]string{eventlog.EventChildToolCall: eventlog.EventToolCall, eventlog.EventChildToolResult: eventlog.EventToolResult}[e.Type]
		v.toChild(c, u.tool(e))
	case eventlog.EventChildEnded:
		v.raw(v.parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": c, "state": endState(e.State)})
	}
}

// endState is the RFD work state of a recorded end: idle with the stop
// reason the agent gave, or unknown when kandev could not see how it ended.
func endState(state string) map[string]any {
	switch state {
	case "completed":
		return map[string]any{"state": "idle", "stopReason": "end_turn"}
	case "cancelled":
		return map[string]any{"state": "idle", "stopReason": "cancelled"}
	case "failed":
		return map[string]any{"state": "idle", "stopReason": "error"}
	}
	return map[string]any{"state": "unknown"}
}

func spawnName(e eventlog.Event) string {
	var s struct{ Name string }
	_ = json.Unmarshal(e.Data, &s)
	if s.Name == "" {
		return e.ChildID
	}
	return s.Name
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// updatesFor is newUpdates for this session: children shown as the editor
// declared.
func (s *session) updatesFor(replay bool) *updates {
	u := newUpdates(replay)
	u.kids = &childView{declared: s.srv.caps.subagents.Load(), parent: s.id,
		toChild: func(child string, up sdk.SessionUpdate) {
			_ = s.srv.client().SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(child), Update: up})
		},
		raw: s.srv.sendRaw, seen: func(child string) { s.srv.noteChild(child, s.id) }}
	return u
}

// sendRaw writes a session/update the SDK does not type, through the
// wire that serialises every message to the editor.
func (srv *server) sendRaw(session string, update map[string]any) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": sdk.ClientMethodSessionUpdate,
		"params": map[string]any{"sessionId": session, "update": update}})
	if err == nil && srv.wire != nil {
		_, _ = srv.wire.Write(append(b, '\n'))
	}
}
