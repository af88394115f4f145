package history

import (
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// PartSubagent is a child the agent started (a subagent or a background
// task): ChildID names it, ToolName is its name, ToolCallID the parent's
// call that started it (when known), State its state (running, completed,
// failed, cancelled, disconnected, unknown), Input its prompt and Output its
// stream as text: its messages, and a line for each tool call.
const PartSubagent = "subagent"

// childStream gathers one child's stream into its part.
type childStream struct {
	entry, part int
	out         strings.Builder
	last        string // the kind of what was written last: "text", "thought", "tool"
}

// foldChild folds an event of a child into the part of the message where
// the child started, so that each child shows under what started it.
func (a *assembler) foldChild(e eventlog.Event) {
	if a.kids == nil {
		a.kids = map[string]*childStream{}
	}
	c := a.kids[e.ChildID]
	if c == nil {
		en := a.assistant(e)
		a.closeText()
		en.Message.Parts = append(en.Message.Parts, Part{Type: PartSubagent, ChildID: e.ChildID, State: "running"})
		c = &childStream{entry: a.current, part: len(en.Message.Parts) - 1}
		a.kids[e.ChildID] = c
	}
	en := &a.entries[c.entry]
	en.Sequence = max(en.Sequence, e.Seq)
	p := &en.Message.Parts[c.part]
	switch e.Type {
	case eventlog.EventChildStarted:
		var s struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(e.Data, &s)
		p.ToolName, p.State = s.Name, "running"
		if e.ToolCallID != "" {
			p.ToolCallID = e.ToolCallID
		}
	case eventlog.EventChildMessage:
		if e.Role == RoleUser {
			p.Input, _ = json.Marshal(e.Content)
			if p.ToolCallID == "" {
				p.ToolCallID = e.ToolCallID
			}
			return
		}
		if e.Source != "reply" { // the answer is already in its stream
			c.write("text", e.Content)
		}
	case eventlog.EventChildThought:
		c.write("thought", e.Content)
	case eventlog.EventChildToolCall, eventlog.EventChildToolResult:
		status := e.ToolStatus
		if status == "" {
			status = "pending"
		}
		c.write("tool", "[tool] "+strings.Join(strings.Fields(e.ToolName), " ")+" ("+status+")")
	case eventlog.EventChildEnded:
		p.State = e.State
		if e.Summary != "" && e.State != "completed" {
			c.write("tool", "[ended] "+e.State+": "+e.Summary)
		}
	}
	p.Output = c.out.String()
}

// write adds a piece of the child's stream: chunks of one message join,
// anything else starts a line.
func (c *childStream) write(kind, s string) {
	if s == "" {
		return
	}
	if c.out.Len() > 0 && (kind != c.last || kind == "tool") && !strings.HasSuffix(c.out.String(), "\n") {
		c.out.WriteByte('\n')
	}
	c.last = kind
	c.out.WriteString(s)
}

// renderSubagent is a child's part as text: a header line, its prompt and
// its stream, indented under the message that started it.
func renderSubagent(p Part) string {
	name := strings.Join(strings.Fields(p.ToolName), " ")
	if name == "" {
		name = "unnamed"
	}
	var b strings.Builder
	b.WriteString("  [subagent] " + name + " " + p.ChildID + " (" + p.State + ")\n")
	var prompt string
	if json.Unmarshal(p.Input, &prompt) == nil && strings.TrimSpace(prompt) != "" {
		b.WriteString("    > " + indent(strings.TrimSpace(prompt), "    > ") + "\n")
	}
	if out := strings.TrimSpace(p.Output); out != "" {
		b.WriteString("    " + indent(out, "    ") + "\n")
	}
	return b.String()
}
