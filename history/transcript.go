package history

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// Part is one piece of a transcript message: text, reasoning, a tool call with
// its outcome, or a marker.
type Part struct {
	Type       string          `json:"type"` // "text" | "reasoning" | "tool" | "marker" | "unknown"
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	State      string          `json:"state,omitempty"` // input-available | output-available | output-error | output-unknown
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Severity   string          `json:"severity,omitempty"`
	ChildID    string          `json:"childId,omitempty"` // a subagent part (transcript_children.go)
}

// Message is one turn of speech in the transcript: a user's message, the
// agent's answer with its reasoning and tool calls, or a system marker.
type Message struct {
	ID     string `json:"id"`
	Role   string `json:"role"` // user | assistant | system
	Parts  []Part `json:"parts"`
	Source string `json:"source,omitempty"` // the turn's source when not "user": continuation, initial, queued
}

// Entry is a message with the span of log sequence numbers folded into it.
type Entry struct {
	StartSequence int64   `json:"start_sequence"`
	Sequence      int64   `json:"sequence"`
	Message       Message `json:"message"`
}

// Part types, message roles and tool part states.
const (
	PartText      = "text"
	PartReasoning = "reasoning"
	PartTool      = "tool"
	PartMarker    = "marker"
	PartUnknown   = "unknown" // an event of a type this kandev does not know

	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"

	ToolInputAvailable  = "input-available"
	ToolOutputAvailable = "output-available"
	ToolOutputError     = "output-error"
	ToolOutputUnknown   = "output-unknown"
)

// Assemble folds a session's events into its transcript (see docs/commands.md). The result
// depends only on the events, taken in seq order:
//   - user_message is its own user entry; it inherits the source of its turn
//     (turn_started.source) when that is not "user", e.g. "continuation";
//   - consecutive agent_message chunks of a turn concatenate into one assistant
//     message's text part, agent_thought chunks into its reasoning part; parts
//     keep their order, so text after a tool call is a new text part;
//   - tool_call and tool_result join by tool_call_id into one tool part, where
//     the call first appeared (a result without a call gets a placeholder call);
//     a later tool_call for the same id updates its name and input (a non-empty
//     input replaces an earlier one) without ending the message in progress;
//   - a marker is its own system entry with a marker part;
//   - an event of a type this kandev does not know (a newer kandev wrote it)
//     is its own system entry with an unknown part naming the type in Kind;
//   - empty or blank text is dropped, and a message left with no parts too;
//   - any other known event ends the assistant message in progress and is
//     not shown.
//
// StartSequence is the seq of the first event folded into an entry, Sequence
// that of the last; StartSequence strictly increases from entry to entry, while
// Sequence may not (a late tool result joins an earlier message). Message.ID is
// "msg-<StartSequence>".
func Assemble(events []eventlog.Event) []Entry {
	if !slices.IsSortedFunc(events, bySeq) {
		events = slices.Clone(events)
		slices.SortStableFunc(events, bySeq)
	}
	a := assembler{
		current:    -1,
		tools:      map[string]toolRef{},
		turnSource: map[string]string{},
	}
	for _, e := range events {
		if e.Type == eventlog.EventTurnStarted && e.TurnID != "" {
			a.turnSource[e.TurnID] = e.Source
		}
	}
	for _, e := range events {
		a.fold(e)
	}
	return a.finish()
}

func bySeq(a, b eventlog.Event) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// toolRef locates a tool part: entry index, part index.
type toolRef struct {
	entry, part int
	hasResult   bool
}

type assembler struct {
	entries     []Entry
	current     int // the assistant entry in progress, or -1
	currentTurn string
	tools       map[string]toolRef
	turnSource  map[string]string

	// The text or reasoning part still receiving chunks (always the last part
	// of the current message) gathers them here, so N chunks cost O(N).
	open     strings.Builder
	openPart *Part

	kids map[string]*childStream // each child's part (transcript_children.go)
}

func (a *assembler) fold(e eventlog.Event) {
	if e.ChildID != "" && eventlog.IsChildEvent(e.Type) {
		a.foldChild(e)
		return
	}
	switch e.Type {
	case eventlog.EventUserMessage:
		a.endMessage()
		if strings.TrimSpace(e.Content) == "" {
			return
		}
		source := e.Source
		if source == "" {
			source = a.turnSource[e.TurnID]
		}
		if source == eventlog.SourceUser {
			source = ""
		}
		a.add(e.Seq, Message{Role: RoleUser, Source: source, Parts: []Part{{Type: PartText, Text: e.Content}}})
	case eventlog.EventAgentMessage:
		a.appendText(e, PartText)
	case eventlog.EventAgentThought:
		a.appendText(e, PartReasoning)
	case eventlog.EventToolCall:
		a.foldToolCall(e)
	case eventlog.EventToolResult:
		a.foldToolResult(e)
	case eventlog.EventMarker:
		a.endMessage()
		a.add(e.Seq, Message{Role: RoleSystem, Parts: []Part{{Type: PartMarker, Kind: e.Kind, Severity: e.Severity, Text: e.Summary}}})
	default:
		a.endMessage()
		if !eventlog.KnownEventType(e.Type) {
			a.add(e.Seq, Message{Role: RoleSystem, Parts: []Part{{Type: PartUnknown, Kind: e.Type, Text: "unknown event " + e.Type}}})
		}
	}
}

// endMessage ends the assistant message in progress, if any.
func (a *assembler) endMessage() {
	a.closeText()
	a.current = -1
}

// closeText stores the gathered chunks into the open part, redacted as a
// whole: a log written chunk by chunk (by an older kandev, or another tool)
// may hold a secret split across chunks.
func (a *assembler) closeText() {
	if a.openPart != nil {
		a.openPart.Text = Redact(a.open.String())
		a.open.Reset()
		a.openPart = nil
	}
}

// add appends a new entry.
func (a *assembler) add(seq int64, m Message) int {
	m.ID = "msg-" + strconv.FormatInt(seq, 10)
	a.entries = append(a.entries, Entry{StartSequence: seq, Sequence: seq, Message: m})
	return len(a.entries) - 1
}

// assistant returns the assistant entry in progress for e's turn, starting one
// if there is none.
func (a *assembler) assistant(e eventlog.Event) *Entry {
	if a.current < 0 || a.currentTurn != e.TurnID {
		a.closeText()
		a.current = a.add(e.Seq, Message{Role: RoleAssistant, Parts: []Part{}})
		a.currentTurn = e.TurnID
	}
	en := &a.entries[a.current]
	en.Sequence = max(en.Sequence, e.Seq)
	return en
}

func (a *assembler) appendText(e eventlog.Event, partType string) {
	if e.Content == "" {
		return
	}
	en := a.assistant(e)
	if a.openPart == nil || a.openPart.Type != partType {
		a.closeText()
		en.Message.Parts = append(en.Message.Parts, Part{Type: partType})
		a.openPart = &en.Message.Parts[len(en.Message.Parts)-1]
	}
	a.open.WriteString(e.Content)
}

func (a *assembler) foldToolCall(e eventlog.Event) {
	if ref, ok := a.tools[toolKey(e)]; ok && e.ToolCallID != "" {
		en := &a.entries[ref.entry]
		en.Sequence = max(en.Sequence, e.Seq)
		p := &en.Message.Parts[ref.part]
		if e.ToolName != "" {
			p.ToolName = e.ToolName
		}
		if !emptyInput(e.Input) {
			p.Input = e.Input
		}
		if !ref.hasResult {
			p.State = toolCallState(e.ToolStatus)
		}
		return
	}
	en := a.assistant(e)
	a.closeText()
	part := Part{Type: PartTool, ToolCallID: e.ToolCallID, ToolName: e.ToolName, State: toolCallState(e.ToolStatus)}
	if !emptyInput(e.Input) {
		part.Input = e.Input
	}
	en.Message.Parts = append(en.Message.Parts, part)
	if e.ToolCallID != "" {
		a.tools[toolKey(e)] = toolRef{entry: a.current, part: len(en.Message.Parts) - 1}
	}
}

func (a *assembler) foldToolResult(e eventlog.Event) {
	ref, ok := a.tools[toolKey(e)]
	if !ok || e.ToolCallID == "" {
		en := a.assistant(e)
		a.closeText()
		en.Message.Parts = append(en.Message.Parts, Part{Type: PartTool, ToolCallID: e.ToolCallID, ToolName: e.ToolName})
		ref = toolRef{entry: a.current, part: len(en.Message.Parts) - 1}
	}
	ref.hasResult = true
	if e.ToolCallID != "" {
		a.tools[toolKey(e)] = ref
	}
	en := &a.entries[ref.entry]
	en.Sequence = max(en.Sequence, e.Seq)
	p := &en.Message.Parts[ref.part]
	if p.ToolName == "" {
		p.ToolName = e.ToolName
	}
	p.State = toolResultState(e.ToolStatus)
	p.Output = e.Content
}

// toolCallState is the state of a tool part that has no result yet; an update
// that reports the call finished counts as its outcome.
func toolCallState(status string) string {
	switch status {
	case "completed":
		return ToolOutputAvailable
	case "failed":
		return ToolOutputError
	}
	return ToolInputAvailable
}

func toolResultState(status string) string {
	switch status {
	case "failed", "error", "cancelled":
		return ToolOutputError
	case "unknown":
		return ToolOutputUnknown
	}
	return ToolOutputAvailable
}

func emptyInput(in json.RawMessage) bool {
	t := bytes.TrimSpace(in)
	return len(t) == 0 || string(t) == "null" || string(t) == "{}" || string(t) == `""`
}

// finish drops blank text and reasoning parts, then entries left without parts.
func (a *assembler) finish() []Entry {
	a.closeText()
	out := a.entries[:0]
	for _, en := range a.entries {
		parts := en.Message.Parts[:0]
		for _, p := range en.Message.Parts {
			if (p.Type == PartText || p.Type == PartReasoning) && strings.TrimSpace(p.Text) == "" {
				continue
			}
			if p.Type == PartSubagent {
				p.Output = Redact(p.Output) // over the whole stream, as for the parent's text
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			continue
		}
		en.Message.Parts = parts
		out = append(out, en)
	}
	return slices.Clip(out)
}

// toolKey joins a call with its result within one turn: agents reuse tool
// call ids across turns (the ACP Go SDK's example agent sends call_1 every turn).
func toolKey(e eventlog.Event) string { return e.TurnID + "\x00" + e.ToolCallID }
