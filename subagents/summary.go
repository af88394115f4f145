package subagents

import (
	"encoding/json"

	"github.com/kandev/kandev/eventlog"
)

// Child is one child as the log tells it.
type Child struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	Task       string `json:"task,omitempty"`
	Prompt     string `json:"prompt,omitempty"`
	Kind       string `json:"kind"`
	Background bool   `json:"background,omitempty"`
	CanCancel  bool   `json:"can_cancel,omitempty"`
	// ToolCallID is the parent's tool call that started it, when known.
	ToolCallID string `json:"tool_call_id,omitempty"`
	TurnID     string `json:"turn_id,omitempty"`
	State      string `json:"state"`
	Detail     string `json:"detail,omitempty"`
	Messages   int    `json:"messages"`
	Calls      []Call `json:"tool_calls"`
	Warnings   int    `json:"warnings,omitempty"`
	StartedSeq int64  `json:"started_seq,omitempty"`
}

// Call is one of a child's tool calls, with its outcome so far.
type Call struct {
	ID     string          `json:"id"`
	Name   string          `json:"name,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// Summarize reads the children from events in log order: each child once,
// in the order they were first seen, with its state now. A child is
// running until its end is recorded; a child whose updates came without
// an announcement is listed too, with what is known of it.
func Summarize(events []eventlog.Event) []Child {
	var s summary
	for i := range events {
		s.add(&events[i])
	}
	return s.children()
}

// summary is Summarize one event at a time, so that a log is read
// without holding its events.
type summary struct {
	out  []*Child
	byID map[string]*Child
	last map[string]string // each child's last event type: chunks of one message count once
}

func (s *summary) get(e *eventlog.Event) *Child {
	c := s.byID[e.ChildID]
	if c == nil {
		c = &Child{ID: e.ChildID, Kind: KindSubagent, State: Running, TurnID: e.TurnID, Calls: []Call{}}
		s.byID[e.ChildID] = c
		s.out = append(s.out, c)
	}
	return c
}

func (s *summary) add(e *eventlog.Event) {
	if e.ChildID == "" || !eventlog.IsChildEvent(e.Type) {
		return
	}
	if s.byID == nil {
		s.byID, s.last = map[string]*Child{}, map[string]string{}
	}
	c := s.get(e)
	prev := s.last[e.ChildID]
	s.last[e.ChildID] = e.Type
	if e.Role == "user" {
		s.last[e.ChildID] = "prompt" // the answer after it is a message of its own
	}
	switch e.Type {
	case eventlog.EventChildStarted:
		var sp Spawn
		_ = json.Unmarshal(e.Data, &sp)
		c.Name, c.Task, c.Kind, c.Background, c.CanCancel = sp.Name, sp.Task, sp.Kind, sp.Background, sp.CanCancel
		if sp.Prompt != "" {
			c.Prompt = sp.Prompt
		}
		if e.ToolCallID != "" {
			c.ToolCallID = e.ToolCallID
		}
		c.State, c.StartedSeq, c.TurnID = Running, e.Seq, e.TurnID
		if c.Kind == "" {
			c.Kind = KindSubagent
		}
	case eventlog.EventChildMessage:
		if e.Role == "user" {
			c.Prompt += e.Content
			if c.ToolCallID == "" {
				c.ToolCallID = e.ToolCallID
			}
		} else if prev != eventlog.EventChildMessage {
			c.Messages++
		}
	case eventlog.EventChildToolCall, eventlog.EventChildToolResult:
		c.Calls = noteCall(c.Calls, *e)
	case eventlog.EventChildUpdate:
		if len(e.Data) > 0 {
			running, cancel := workUpdate(e.Data)
			if running {
				c.State = Running
			}
			if cancel != nil {
				c.CanCancel = *cancel
			}
		}
	case eventlog.EventChildEnded:
		c.State, c.Detail = e.State, e.Summary
		if c.Name == "" && c.Task == "" && len(e.Data) > 0 {
			// A repair's mark names a child whose start lies elsewhere.
			var sp Spawn
			_ = json.Unmarshal(e.Data, &sp)
			c.Name, c.Task = sp.Name, sp.Task
		}
	}
}

func (s *summary) children() []Child {
	res := make([]Child, len(s.out))
	for i, c := range s.out {
		res[i] = *c
	}
	return res
}

// workUpdate reads a raw child update that is a subagent_update: running
// says an idle RFD child was given work again; cancel, when the update
// names the child's capabilities, whether the agent now offers to cancel
// it (Codex offers it in an update after the announcement, and withdraws
// it with a null when the child ends).
func workUpdate(raw json.RawMessage) (running bool, cancel *bool) {
	var u struct {
		Kind  string `json:"sessionUpdate"`
		State struct {
			State string `json:"state"`
		} `json:"state"`
		Caps *struct {
			Cancel json.RawMessage `json:"cancel"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(raw, &u) != nil || u.Kind != "subagent_update" {
		return false, nil
	}
	if u.Caps != nil {
		offered := len(u.Caps.Cancel) > 0 && string(u.Caps.Cancel) != "null"
		cancel = &offered
	}
	return u.State.State == "running" || u.State.State == "requires_action", cancel
}

// noteCall adds or updates the call of a child_tool_call or
// child_tool_result event.
func noteCall(calls []Call, e eventlog.Event) []Call {
	for i := range calls {
		if calls[i].ID == e.ToolCallID {
			if e.ToolStatus != "" {
				calls[i].Status = e.ToolStatus
			}
			if e.ToolName != "" {
				calls[i].Name = e.ToolName
			}
			if e.ToolKind != "" {
				calls[i].Kind = e.ToolKind
			}
			return calls
		}
	}
	status := e.ToolStatus
	if status == "" {
		status = "pending"
	}
	return append(calls, Call{ID: e.ToolCallID, Name: e.ToolName, Kind: e.ToolKind, Status: status, Input: e.Input})
}

// Unfinished are the children still running: those a repair of a dead
// owner must mark unknown.
func Unfinished(children []Child) []Child {
	var out []Child
	for _, c := range children {
		if c.State == Running {
			out = append(out, c)
		}
	}
	return out
}

// Counts is how many children are in each state.
func Counts(children []Child) map[string]int {
	m := map[string]int{}
	for _, c := range children {
		m[c.State]++
	}
	return m
}

// SideEffecting reports whether a tool call of this kind may have changed
// something outside the conversation: anything but a read, a search, a
// fetch or thinking (a call of no kind cannot be vouched for either).
func SideEffecting(kind string) bool {
	switch kind {
	case "read", "search", "fetch", "think":
		return false
	}
	return true
}
