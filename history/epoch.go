package history

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/kandev/kandev/eventlog"
)

// Fence says which events of a log belong to its current epoch, read newest
// first. A rewind event hides what came after its to_seq and before the
// rewind itself; the log keeps those events, the conversation does not.
// Rewinds hidden by a later one are hidden with what they fenced: a rewind
// only ever goes back to a seq of its own epoch, so the newest-first walk
// needs no memory beyond the lowest fence seen.
type Fence struct {
	keepThrough int64 // events with a higher seq are hidden
}

// NewFence returns a fence that has seen no rewind yet.
func NewFence() *Fence { return &Fence{keepThrough: math.MaxInt64} }

// Visible reports whether e, the next event read newest first, is in the
// current epoch.
func (f *Fence) Visible(e eventlog.Event) bool {
	if e.Seq > f.keepThrough {
		return false
	}
	if e.Type == eventlog.EventRewind {
		f.keepThrough = RewindTo(e)
	}
	return true
}

// Hides reports whether a rewind has hidden everything after seq.
func (f *Fence) Hides(seq int64) bool { return seq > f.keepThrough }

// RewindTo is the last seq a rewind event keeps (0 for a clear or a rewind
// event without to_seq).
func RewindTo(e eventlog.Event) int64 {
	if e.ToSeq == nil {
		return 0
	}
	return *e.ToSeq
}

// CurrentEpoch returns the events of events (in seq order) that belong to
// the current epoch, in seq order.
func CurrentEpoch(events []eventlog.Event) []eventlog.Event {
	f := NewFence()
	var out []eventlog.Event
	for i := len(events) - 1; i >= 0; i-- {
		if f.Visible(events[i]) {
			out = append(out, events[i])
		}
	}
	slices.Reverse(out)
	return out
}

// Boundaries are the seqs a conversation can be cut at (rewind --to, fork
// --at): 0, the empty conversation, and the end of every turn (its
// turn_ended) in events, which must be one epoch in seq order.
func Boundaries(events []eventlog.Event) []int64 {
	out := []int64{0}
	for _, e := range events {
		if e.Type == eventlog.EventTurnEnded {
			out = append(out, e.Seq)
		}
	}
	return out
}

// CheckBoundary reports whether seq is one of bounds (ascending); when it is
// not, before and after are the nearest boundaries on either side (-1 when
// there is none).
func CheckBoundary(bounds []int64, seq int64) (ok bool, before, after int64) {
	before, after = -1, -1
	for _, b := range bounds {
		switch {
		case b == seq:
			return true, b, b
		case b < seq:
			before = b
		case after < 0:
			after = b
		}
	}
	return false, before, after
}

// FileChanges are the tool calls of events (one epoch, in seq order) after
// seq that change files (kinds edit, delete, move), one per call: what a
// rewind to seq does not take back. A call whose permission was denied
// (its last permission_resolved says allowed: false) never ran, and is not
// one.
func FileChanges(events []eventlog.Event, after int64) []eventlog.Event {
	var out []eventlog.Event
	denied := map[string]bool{}
	for _, e := range events {
		if e.Type == eventlog.EventPermissionResolved && e.ToolCallID != "" {
			var answer struct {
				Allowed bool `json:"allowed"`
			}
			denied[toolKey(e)] = json.Unmarshal(e.Data, &answer) == nil && !answer.Allowed
		}
	}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Seq <= after || e.Type != eventlog.EventToolCall || denied[toolKey(e)] {
			continue
		}
		switch e.ToolKind {
		case "edit", "delete", "move":
		default:
			continue
		}
		if k := toolKey(e); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// ForkHistory is what a fork's log starts with: the conversation of events
// (one epoch, in seq order) up to seq at: turns, messages, thoughts, plans,
// tool calls and results, permission requests and answers. The parent's
// process life (agent starts and exits, states, markers, raw updates) stays
// in the parent's log.
func ForkHistory(events []eventlog.Event, at int64) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range events {
		if e.Seq > at {
			break
		}
		switch e.Type {
		case eventlog.EventTurnStarted, eventlog.EventTurnEnded, eventlog.EventUserMessage, eventlog.EventAgentMessage,
			eventlog.EventAgentThought, eventlog.EventPlan, eventlog.EventToolCall, eventlog.EventToolResult,
			eventlog.EventPermissionRequest, eventlog.EventPermissionResolved:
			out = append(out, e)
		}
	}
	return out
}
