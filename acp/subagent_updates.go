package acp

import (
	"encoding/json"
	"sync/atomic"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/subagents"
)

// kandev declares clientCapabilities.subagents (client_caps.go), so an
// agent that starts children (Claude's adapter: subagents, background
// tasks) sends each as its own session in the subagents RFD form, or its
// earlier draft. Their updates are routed here, on the recorder goroutine,
// by the subagents policy: the parent's stream is converted as ever, a
// child's stream becomes child_* events tagged with the child's id, and
// what the policy finds wrong comes with a warning marker.

// childStreams is the recorder's state about children: the router and the
// tool call titles of each child's stream.
type childStreams struct {
	router subagents.Router
	tools  map[string]toolNames
	parent *atomic.Pointer[string]
}

func newChildStreams(parent *atomic.Pointer[string], known map[string]bool) *childStreams {
	cs := &childStreams{tools: map[string]toolNames{}, parent: parent}
	for id, ended := range known {
		cs.router.Know(id, ended)
	}
	return cs
}

// events converts one session/update's params; tools are the parent's.
func (cs *childStreams) events(params []byte, tools toolNames) []*eventlog.Event {
	if p := cs.parent.Load(); p != nil {
		cs.router.Parent = *p
	}
	upd := gjson.GetBytes(params, "update")
	rt := cs.router.Route(gjson.GetBytes(params, "sessionId").Str, upd)
	var out []*eventlog.Event
	if rt.Warning != "" {
		m := history.NewMarker(history.MarkerSubagentInput, "The agent sent "+rt.Warning+"; recorded as it came.", "")
		out = append(out, &m)
	}
	switch rt.Action {
	case subagents.ToParent:
		return append(out, updateToEvents(params, tools)...)
	case subagents.Drop:
		return out
	case subagents.Started:
		data, _ := json.Marshal(rt.Spawn)
		return append(out, &eventlog.Event{Type: eventlog.EventChildStarted, ChildID: rt.Child, ToolCallID: rt.ToolCallID, Data: data})
	case subagents.ChildPrompt:
		return append(out, &eventlog.Event{Type: eventlog.EventChildMessage, ChildID: rt.Child, Role: "user", Content: rt.Text, ToolCallID: rt.ToolCallID})
	case subagents.Ended:
		return append(out, &eventlog.Event{Type: eventlog.EventChildEnded, ChildID: rt.Child, State: rt.State, Summary: rt.Detail})
	}
	ct := cs.tools[rt.Child]
	if ct == nil {
		ct = toolNames{}
		cs.tools[rt.Child] = ct
	}
	for _, e := range updateToEvents(params, ct) {
		e.Type, e.ChildID = childType(e.Type), rt.Child
		if e.Type == eventlog.EventChildUpdate && len(e.Data) == 0 {
			e.Data = json.RawMessage(upd.Raw)
		}
		if k := upd.Get("sessionUpdate").Str; k == "session_message" {
			// A child's answer to its parent: its text, in its own stream.
			e.Type, e.Role, e.Content, e.Source = eventlog.EventChildMessage, "assistant", messageText(upd), "reply"
		}
		out = append(out, e)
	}
	return out
}

// childType is the child's counterpart of a parent's event type.
func childType(t string) string {
	switch t {
	case eventlog.EventAgentMessage:
		return eventlog.EventChildMessage
	case eventlog.EventAgentThought:
		return eventlog.EventChildThought
	case eventlog.EventToolCall:
		return eventlog.EventChildToolCall
	case eventlog.EventToolResult:
		return eventlog.EventChildToolResult
	}
	return eventlog.EventChildUpdate
}

func messageText(upd gjson.Result) string {
	s := ""
	for _, b := range upd.Get("content").Array() {
		s += b.Get("text").Str
	}
	return s
}

// setParent notes the agent's session id for kandev's session: updates of
// any other session are a child's.
// parentUnknown: the agent is making kandev's session (session/new, fork)
// and has not said its id yet; every id not announced as a child is the
// parent's until it has.
func (c *Conn) parentUnknown() {
	c.parent.Store(new(string))
}

func (c *Conn) setParent(token string) {
	if token != "" {
		c.parent.Store(&token)
	}
}

// CancelChild sends session/cancel for the child session id, as the
// subagents RFD lets a client stop a child that offers cancel.
func (c *Conn) CancelChild(id string) error {
	return c.Cancel(id)
}
