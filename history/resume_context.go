package history

import (
	"strconv"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// DefaultMaxReplayBytes bounds the resume context when the configuration does
// not (session.derive.max_replay_bytes).
const DefaultMaxReplayBytes = 131072

// Per-entry bounds of the resume context, in bytes (see docs/resume.md).
const (
	maxReplayMessageBytes    = 2000
	maxReplayToolResultBytes = 500
	maxReplayToolNameBytes   = 200
)

const (
	resumeContextHeader = "RESUME CONTEXT FOR CONTINUING TASK\n\n=== EXECUTION HISTORY ===\n"
	resumeRequestHeader = "\n=== CURRENT REQUEST ===\n"
	resumeInstructions  = "\n\n=== INSTRUCTIONS ===\n" +
		"You are continuing work on the above task. The conversation history above was restored by kandev " +
		"because the agent's previous session could not be resumed. Review it, then handle the current request. " +
		"Do not repeat work that was already completed."
)

// BuildResumeContext renders the block that carries a session's history into
// the first prompt of a fresh agent session (see docs/resume.md), at most maxBytes long
// (<= 0 means DefaultMaxReplayBytes).
//
// Entries: user_message → "[USER]: text"; the agent_message chunks of a turn →
// one "[ASSISTANT]: text"; tool_call → "[TOOL CALL: name]" (once per call id);
// tool_result → "[TOOL RESULT: name] content". Messages are cut at 2,000
// bytes, tool results at 500, on a UTF-8 boundary, marked " [truncated]".
// Other event types end an assistant message in progress and are not shown;
// agent_thought is not shown and does not end it.
//
// When everything does not fit, the first user message (the original request)
// and the newest entries are kept, and the entries between them become one
// note that names "kandev transcript <sessionID>". When even that does not fit,
// things give way in this order: the first message is cut and then dropped,
// the note is dropped, and last the current request is cut. A bound smaller
// than the fixed frame (356 bytes) cuts the frame itself.
//
// Cost is linear in len(history): entries are measured, never rendered, until
// the kept ones are known.
func BuildResumeContext(history []eventlog.Event, request, sessionID string, maxBytes int) string {
	return BuildResumeContextWindow(history, request, sessionID, maxBytes, false)
}

// HasConversation reports whether evs hold a message or a tool call: a
// history without one gives a fresh agent session nothing to carry.
func HasConversation(evs []eventlog.Event) bool {
	for _, e := range evs {
		switch e.Type {
		case eventlog.EventUserMessage, eventlog.EventAgentMessage, eventlog.EventToolCall, eventlog.EventToolResult:
			return true
		}
	}
	return false
}

// BuildResumeContextWindow is BuildResumeContext over a window of the log:
// when olderUnread is set, history holds the first user message and the
// newest events only (a long log is read from its end), so the note says
// "more than N" entries were omitted instead of a count it cannot know.
func BuildResumeContextWindow(history []eventlog.Event, request, sessionID string, maxBytes int, olderUnread bool) string {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxReplayBytes
	}
	request = strings.TrimSpace(request)
	entries := replayEntries(history)

	frame := len(resumeContextHeader) + len(resumeRequestHeader) + len(resumeInstructions)
	all := 0
	for _, e := range entries {
		all += e.size()
	}
	if frame+len(request)+all <= maxBytes && !olderUnread {
		return renderResumeContext(entries, nil, "", request, maxBytes)
	}

	budget := maxBytes - frame - len(request) - len(omittedNote(len(entries), sessionID, olderUnread))
	first := -1
	for i, e := range entries {
		if e.user {
			first = i
			break
		}
	}
	var pinned []replayEntry
	if first >= 0 && budget > 0 {
		p := entries[first]
		if p.size() > budget {
			p = p.shrunk(budget)
		}
		if p.text != "" {
			pinned = append(pinned, p)
			budget -= p.size()
		}
	}
	keepFrom := len(entries)
	for keepFrom > first+1 && budget >= entries[keepFrom-1].size() {
		budget -= entries[keepFrom-1].size()
		keepFrom--
	}
	kept := entries[keepFrom:]
	omitted := len(entries) - len(kept) - len(pinned)

	note := ""
	if (omitted > 0 || olderUnread) && budget >= 0 {
		note = omittedNote(omitted, sessionID, olderUnread)
	}
	if note == "" && omitted > 0 { // not even the note fits: no history at all
		pinned, kept = nil, nil
	}
	if room := maxBytes - frame - len(note) - size(pinned) - size(kept); len(request) > room {
		request = capUTF8(request, max(room, 0))
	}
	return renderResumeContext(pinned, kept, note, request, maxBytes)
}

// omittedNote is the line that stands for the entries left out: n of them,
// or, when older entries were never read (more), at least n.
func omittedNote(n int, sessionID string, more bool) string {
	var count string
	switch {
	case more && n == 0:
		count = "earlier entries"
	case more:
		count = "more than " + strconv.Itoa(n) + " earlier entries"
	case n == 1:
		count = "1 earlier entry"
	default:
		count = strconv.Itoa(n) + " earlier entries"
	}
	return "[... " + count + ` omitted; run "kandev transcript ` + sessionID + `" to see them ...]` + "\n"
}

func renderResumeContext(pinned, kept []replayEntry, note, request string, maxBytes int) string {
	var b strings.Builder
	b.Grow(min(maxBytes, len(resumeContextHeader)+size(pinned)+len(note)+size(kept)+len(resumeRequestHeader)+len(request)+len(resumeInstructions)))
	b.WriteString(resumeContextHeader)
	for _, e := range pinned {
		e.writeTo(&b)
	}
	b.WriteString(note)
	for _, e := range kept {
		e.writeTo(&b)
	}
	b.WriteString(resumeRequestHeader)
	b.WriteString(request)
	b.WriteString(resumeInstructions)
	return cutUTF8(b.String(), maxBytes)
}

// replayEntry is one line of the execution history: label, then text.
type replayEntry struct {
	label     string // "[USER]: ", "[ASSISTANT]: ", "[TOOL CALL: name]", "[TOOL RESULT: name] "
	text      string
	truncated bool
	user      bool
}

func (e replayEntry) size() int {
	n := len(e.label) + len(e.text) + 1
	if e.truncated {
		n += len(truncatedMark)
	}
	return n
}

// shrunk returns e cut to fit in n bytes, with an empty text if nothing fits.
func (e replayEntry) shrunk(n int) replayEntry {
	room := n - len(e.label) - len(truncatedMark) - 1
	e.text = cutUTF8(e.text, room)
	e.truncated = true
	return e
}

func (e replayEntry) writeTo(b *strings.Builder) {
	b.WriteString(e.label)
	b.WriteString(e.text)
	if e.truncated {
		b.WriteString(truncatedMark)
	}
	b.WriteByte('\n')
}

func size(entries []replayEntry) int {
	n := 0
	for _, e := range entries {
		n += e.size()
	}
	return n
}

// replayEntries turns events into execution history entries, each already cut
// to its per-entry bound.
func replayEntries(history []eventlog.Event) []replayEntry {
	var (
		entries   []replayEntry
		callIndex = map[string]int{} // tool_call_id → its entry
		asst      assistantText
		children  = map[string]string{} // child id → its name (resume_children.go)
	)
	flush := func() {
		if text, truncated, ok := asst.take(); ok {
			entries = append(entries, replayEntry{label: "[ASSISTANT]: ", text: text, truncated: truncated})
		}
	}
	for _, e := range history {
		if c, ok := childEntry(e, children); ok {
			flush()
			entries = append(entries, c)
			continue
		}
		switch e.Type {
		case eventlog.EventUserMessage:
			flush()
			if text := strings.TrimSpace(e.Content); text != "" {
				entries = append(entries, newReplayEntry("[USER]: ", text, maxReplayMessageBytes, true))
			}
		case eventlog.EventAgentMessage:
			if asst.started && asst.turn != e.TurnID {
				flush()
			}
			asst.add(e.TurnID, e.Content)
		case eventlog.EventAgentThought:
			// Not replayed; part of the same assistant message.
		case eventlog.EventToolCall:
			if i, seen := callIndex[e.ToolCallID]; seen && e.ToolCallID != "" {
				if entries[i].label == toolCallLabel("") && e.ToolName != "" {
					entries[i].label = toolCallLabel(e.ToolName)
				}
				continue // an update of a call already listed
			}
			flush()
			if e.ToolCallID != "" {
				callIndex[e.ToolCallID] = len(entries)
			}
			entries = append(entries, replayEntry{label: toolCallLabel(e.ToolName)})
		case eventlog.EventToolResult:
			flush()
			text := strings.TrimSpace(e.Content)
			if text == "" && e.ToolStatus != "" && e.ToolStatus != "completed" {
				text = "(" + e.ToolStatus + ")"
			}
			label := "[TOOL RESULT: " + toolNameForReplay(e.ToolName) + "]"
			if text != "" {
				label += " "
			}
			entries = append(entries, newReplayEntry(label, text, maxReplayToolResultBytes, false))
		default:
			flush()
		}
	}
	flush()
	return entries
}

func newReplayEntry(label, text string, limit int, user bool) replayEntry {
	e := replayEntry{label: label, text: text, user: user}
	if len(text) > limit {
		e.text, e.truncated = cutUTF8(text, limit), true
	}
	return e
}

func toolCallLabel(name string) string {
	return "[TOOL CALL: " + toolNameForReplay(name) + "]"
}

// toolNameForReplay keeps a tool name (an ACP title, free text) on one short line.
func toolNameForReplay(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return "unknown"
	}
	return capUTF8(name, maxReplayToolNameBytes)
}

// assistantText gathers the agent_message chunks of one assistant message,
// keeping no more than the replay bound so a huge message costs no memory.
type assistantText struct {
	b         strings.Builder
	turn      string
	started   bool
	truncated bool
}

func (a *assistantText) add(turn, chunk string) {
	if !a.started {
		a.started, a.turn = true, turn
	}
	if a.b.Len() == 0 {
		chunk = strings.TrimLeft(chunk, " \t\r\n")
	}
	if a.b.Len() > maxReplayMessageBytes {
		if strings.TrimSpace(chunk) != "" {
			a.truncated = true
		}
		return
	}
	a.b.WriteString(chunk)
}

// take returns the gathered text cut to the bound, and resets a.
func (a *assistantText) take() (text string, truncated bool, ok bool) {
	if !a.started {
		return "", false, false
	}
	text = strings.TrimRight(a.b.String(), " \t\r\n")
	truncated = a.truncated
	if len(text) > maxReplayMessageBytes {
		text, truncated = cutUTF8(text, maxReplayMessageBytes), true
	}
	*a = assistantText{}
	return text, truncated, text != ""
}
