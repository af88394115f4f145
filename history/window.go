package history

import (
	"slices"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// TailWindow gathers a log's events from its end, newest first, and says when
// it holds enough of them to assemble the newest entries exactly: the entries
// of a transcript page, or the messages of a recap. Reading stops there, so
// the cost follows what is shown, not the length of the log.
//
// The rule that makes a window exact: it always begins at a cut point, a
// turn_started event (or the log's first event). Assemble carries three things
// from one event to the next: the assistant message in progress, the source of
// each turn, and tool calls by id. A turn_started ends the message in
// progress and brings its own source; and a tool call's updates and result
// carry the call's turn_id and arrive before that turn's turn_ended (the
// agent sends them during the turn; repair appends a dead turn's unknown
// results before its turn_ended, before any later turn starts), so nothing
// after a turn_started joins a call made before it. Assemble over the events
// from a cut point to the end therefore gives, from there on, the entries
// Assemble over the whole log gives. A log without turn_started events has
// no cut point but its first event and is read whole.
//
// With before > 0 the window is for the entries that start before seq
// before. Of the events from before on, it keeps only those of the turn still
// open at before (up to the next turn_started): they finish the entry in
// progress there and carry its late tool results; Page drops the entries they
// start.
type TailWindow struct {
	before  int64
	need    int
	markers bool // markers count towards need (a page) or not (a recap's messages)

	events []eventlog.Event // newest first, seq < before
	late   []eventlog.Event // newest first, seq >= before, since the last turn_started seen
	prev   eventlog.Event   // the last event added to events (Seq 0: none yet)

	candidates int // entry starts seen, counted generously (never fewer than Assemble makes)
	checkAt    int // candidates needed before the next Assemble check
	done       bool
	entries    []Entry
	assembled  bool
}

// NewTailWindow returns a window that wants need entries starting before
// seq before (before <= 0: no bound). countMarkers says whether marker
// entries count towards need.
func NewTailWindow(before int64, need int, countMarkers bool) *TailWindow {
	return &TailWindow{before: before, need: max(need, 0), markers: countMarkers, checkAt: max(need, 1)}
}

// Add takes the next older event and reports whether the window wants more.
// Once it returns false the window is complete; when the log's first event
// was added and it still wants more, the window holds the whole log, which
// is complete too.
func (w *TailWindow) Add(e eventlog.Event) bool {
	if w.done {
		return false
	}
	w.assembled = false
	if w.before > 0 && e.Seq >= w.before {
		if e.Type == eventlog.EventTurnStarted {
			w.late = w.late[:0] // what follows belongs to turns that started at or after before
		} else {
			w.late = append(w.late, e)
		}
		return true
	}
	if w.prev.Seq == 0 && e.Type == eventlog.EventTurnStarted {
		w.late = nil // every turn before this one ended before it
	}
	// An assistant message starts at the oldest event of a run of agent
	// events of one turn; the run's start is known once the event before it is.
	if isAgentEvent(w.prev) && !(isAgentEvent(e) && e.TurnID == w.prev.TurnID) {
		w.candidates++
	}
	switch {
	case e.Type == eventlog.EventUserMessage && strings.TrimSpace(e.Content) != "":
		w.candidates++
	case (e.Type == eventlog.EventMarker || !eventlog.KnownEventType(e.Type)) && w.markers:
		w.candidates++ // a system entry
	}
	w.events = append(w.events, e)
	w.prev = e
	if e.Type == eventlog.EventTurnStarted && w.candidates >= w.checkAt {
		if w.counted(w.Entries()) >= w.need {
			w.done = true
			return false
		}
		// Blank runs and joined results were counted but made no entry.
		w.checkAt = max(2*w.checkAt, w.candidates+1)
	}
	return true
}

// Done reports whether the window stopped at a cut point with enough entries
// (false when it was fed the whole log).
func (w *TailWindow) Done() bool { return w.done }

// Events returns the window's events in seq order.
func (w *TailWindow) Events() []eventlog.Event {
	out := make([]eventlog.Event, 0, len(w.events)+len(w.late))
	for i := len(w.events) - 1; i >= 0; i-- {
		out = append(out, w.events[i])
	}
	for i := len(w.late) - 1; i >= 0; i-- {
		out = append(out, w.late[i])
	}
	return out
}

// Entries is Assemble over the window's events.
func (w *TailWindow) Entries() []Entry {
	if !w.assembled {
		w.entries = Assemble(w.Events())
		w.assembled = true
	}
	return w.entries
}

// counted is how many of entries start before the bound and count.
func (w *TailWindow) counted(entries []Entry) int {
	n := 0
	for _, en := range entries {
		if (w.before <= 0 || en.StartSequence < w.before) && (w.markers || en.Message.Role != RoleSystem) {
			n++
		}
	}
	return n
}

// isAgentEvent reports whether e is folded into an assistant message.
func isAgentEvent(e eventlog.Event) bool {
	switch e.Type {
	case eventlog.EventAgentMessage, eventlog.EventAgentThought, eventlog.EventToolCall, eventlog.EventToolResult:
		return true
	}
	return false
}

// TranscriptPage returns the transcript page (docs/commands.md) for the entries of a complete
// window: Page over its entries, with has_older exact because a window that
// stopped early holds more entries than the page.
func (w *TailWindow) TranscriptPage(limit int) (page []Entry, hasOlder bool, nextBefore int64) {
	return Page(w.Entries(), w.before, limit)
}

// Span summarises a stretch of the log that a recap counts but does not
// show: how many messages the transcript has there, the newest seq folded
// into them, and the markers with enough turn_started events to tell which
// markers a later turn resolved.
type Span struct {
	Messages         int
	TranscriptCursor int64
	events           []eventlog.Event // newest first: markers, and one turn_started between two markers
}

// AddOlder adds the stretch of events (in seq order) that ends where the span
// begins. It must begin at a cut point (see TailWindow), so that Assemble
// over it alone is exact.
func (s *Span) AddOlder(events []eventlog.Event) {
	for _, en := range Assemble(events) {
		if en.Message.Role != RoleSystem {
			s.Messages++
		}
		s.TranscriptCursor = max(s.TranscriptCursor, en.Sequence)
	}
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		switch {
		case e.Type == eventlog.EventMarker:
			s.events = append(s.events, e)
		case e.Type == eventlog.EventTurnStarted && (len(s.events) == 0 || s.events[len(s.events)-1].Type != eventlog.EventTurnStarted):
			s.events = append(s.events, e)
		}
	}
}

// Events returns the span's markers and turn boundaries in seq order.
func (s *Span) Events() []eventlog.Event {
	out := slices.Clone(s.events)
	slices.Reverse(out)
	return out
}
