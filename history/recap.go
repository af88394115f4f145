package history

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// Recap sizes (kandev recap --limit) and bounds.
const (
	DefaultRecapLimit = 20
	MaxRecapLimit     = 100
	// RecentMarkerCount is how many of the newest markers a recap shows.
	RecentMarkerCount = 5
	// A recap is a bounded snapshot: each text or reasoning part of a message
	// and each queued prompt is cut to maxRecapTextBytes, each tool input and
	// output to maxRecapToolBytes (the resume context's cuts are 2,000 and
	// 500). kandev transcript shows them whole.
	maxRecapTextBytes = 2000
	maxRecapToolBytes = 500
)

// ConsistencyPersistedReads says a recap was read from the stored files only.
const ConsistencyPersistedReads = "persisted_reads"

// Recap is the bounded snapshot for reorientation (docs/commands.md).
type Recap struct {
	Session         RecapSession     `json:"session"`
	RecentMarkers   []eventlog.Event `json:"recent_markers"`
	RecentMessages  []Entry          `json:"recent_messages"`
	OmittedMessages int              `json:"omitted_messages"`
	PendingMarkers  []eventlog.Event `json:"pending_markers"`
	PendingInputs   []PendingInput   `json:"pending_inputs"`
	Snapshot        Snapshot         `json:"snapshot"`
	// Children counts the agent's children by state (running, completed,
	// unknown, ...); absent when it started none.
	Children map[string]int `json:"children,omitempty"`
}

// RecapSession is the session record, redacted, with its badge.
type RecapSession struct {
	state.Session
	Badge string `json:"badge"`
}

// PendingInput is a queued prompt that no turn has served yet.
type PendingInput struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Text     string    `json:"text"`
	QueuedAt time.Time `json:"queued_at"`
}

// Snapshot says what a recap was read from.
type Snapshot struct {
	GeneratedAt time.Time `json:"generated_at"`
	// EventCursor is the seq of the newest event; TranscriptCursor the
	// newest seq folded into a transcript entry.
	EventCursor      int64 `json:"event_cursor"`
	TranscriptCursor int64 `json:"transcript_cursor"`
	// QueueGeneration counts the inbox entries ever queued (served or not):
	// it changes whenever an input is queued.
	QueueGeneration int64  `json:"queue_generation"`
	Consistency     string `json:"consistency"`
}

// Digest condenses the events of a log before seq Through (a turn_started),
// so that a recap need not read them again: how many messages the transcript
// holds there, the newest seq folded into it, the newest markers and the
// markers still pending there. Check identifies the line of event Through,
// so a reader can tell that the log is still the one the digest was made of.
type Digest struct {
	Version          int              `json:"version"`
	Through          int64            `json:"through"`
	Check            string           `json:"check"`
	Messages         int              `json:"messages"`
	TranscriptCursor int64            `json:"transcript_cursor"`
	RecentMarkers    []eventlog.Event `json:"recent_markers"`
	PendingMarkers   []eventlog.Event `json:"pending_markers"`
}

// DigestVersion is the Digest format this kandev writes and reads.
const DigestVersion = 1

// RecapInput is what BuildRecap reads: the record, the inbox, and the log in
// up to three consecutive parts, oldest first.
type RecapInput struct {
	Session state.Session
	Badge   string
	Limit   int // messages to show; <= 0 means DefaultRecapLimit, more than MaxRecapLimit means MaxRecapLimit

	// Before condenses the events before Before.Through (zero: none).
	Before Digest
	// Skipped holds the events from Before.Through up to the window, counted
	// but not kept.
	Skipped Span
	// Window is the newest events, from a cut point to the end of the log,
	// in seq order. It may begin before Before.Through; its older events then
	// only serve to show messages.
	Window []eventlog.Event

	// Unserved is the inbox past the record's served offset; InboxServed
	// the record's count of served entries.
	Unserved    []state.Input
	InboxServed int64
	GeneratedAt time.Time
}

// BuildRecap computes the recap, and the digest of the log before its newest
// turn_started for the next recap to start from (ok false when the window
// holds no turn_started). The recap depends only on the input, and not on
// where the input splits the log into Before, Skipped and Window: the same
// stored events give the same recap, but for GeneratedAt.
func BuildRecap(in RecapInput) (r Recap, next Digest, ok bool) {
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultRecapLimit
	}
	limit = min(limit, MaxRecapLimit)
	from := in.Before.Through // the window's events before it are counted in Before

	entries := Assemble(in.Window)
	var messages []Entry
	counted := 0
	cursor := max(in.Before.TranscriptCursor, in.Skipped.TranscriptCursor)
	for _, en := range entries {
		cursor = max(cursor, en.Sequence)
		if en.Message.Role == RoleSystem {
			continue
		}
		messages = append(messages, en)
		if en.StartSequence >= from {
			counted++
		}
	}
	total := in.Before.Messages + in.Skipped.Messages + counted
	recent := messages[max(0, len(messages)-limit):]

	var newer []eventlog.Event // everything after Before, in seq order
	newer = append(newer, in.Skipped.Events()...)
	for _, e := range in.Window {
		if e.Seq >= from {
			newer = append(newer, e)
		}
	}
	markers := newestMarkers(in.Before.RecentMarkers, newer)
	pending := PendingMarkers(append(slices.Clone(in.Before.PendingMarkers), newer...))

	r = Recap{
		Session:         RecapSession{Session: RedactSession(in.Session), Badge: in.Badge},
		RecentMarkers:   nonNil(markers),
		RecentMessages:  make([]Entry, 0, len(recent)),
		OmittedMessages: total - len(recent),
		PendingMarkers:  nonNil(pending),
		PendingInputs:   []PendingInput{},
		Snapshot: Snapshot{
			GeneratedAt:      in.GeneratedAt.UTC(),
			TranscriptCursor: cursor,
			QueueGeneration:  in.InboxServed + int64(len(in.Unserved)),
			Consistency:      ConsistencyPersistedReads,
		},
	}
	for _, en := range recent {
		r.RecentMessages = append(r.RecentMessages, boundEntry(en))
	}
	for _, q := range in.Unserved {
		if q.Kind == state.InputPrompt {
			r.PendingInputs = append(r.PendingInputs, PendingInput{ID: q.ID, Kind: q.Kind, Text: capUTF8(Redact(q.Text), maxRecapTextBytes), QueuedAt: q.QueuedAt.UTC()})
		}
	}
	if n := len(in.Window); n > 0 {
		r.Snapshot.EventCursor = in.Window[n-1].Seq
	}

	next, ok = nextDigest(in, entries, newer, total)
	return r, next, ok
}

// nextDigest summarises everything before the window's newest turn_started,
// so the next recap reads only from there; ok is false when there is no
// such cut after the previous digest.
func nextDigest(in RecapInput, entries []Entry, newer []eventlog.Event, total int) (next Digest, ok bool) {
	from := in.Before.Through
	// The next digest ends at the window's newest turn_started.
	cut := int64(0)
	for i := len(in.Window) - 1; i >= 0; i-- {
		if in.Window[i].Type == eventlog.EventTurnStarted {
			cut = in.Window[i].Seq
			break
		}
	}
	if cut == 0 || cut < from {
		return Digest{}, false
	}
	next = Digest{Version: DigestVersion, Through: cut, Messages: total, TranscriptCursor: max(in.Before.TranscriptCursor, in.Skipped.TranscriptCursor)}
	for _, en := range entries {
		switch {
		case en.StartSequence >= cut:
			if en.Message.Role != RoleSystem {
				next.Messages--
			}
		case en.StartSequence >= from:
			next.TranscriptCursor = max(next.TranscriptCursor, en.Sequence)
		}
	}
	var older []eventlog.Event // everything after Before and before the cut
	for _, e := range newer {
		if e.Seq < cut {
			older = append(older, e)
		}
	}
	next.RecentMarkers = nonNil(newestMarkers(in.Before.RecentMarkers, older))
	next.PendingMarkers = nonNil(PendingMarkers(append(slices.Clone(in.Before.PendingMarkers), older...)))
	return next, true
}

// newestMarkers returns the RecentMarkerCount newest markers of older (already
// markers, oldest first) followed by the markers among events.
func newestMarkers(older []eventlog.Event, events []eventlog.Event) []eventlog.Event {
	all := slices.Clone(older)
	for _, e := range events {
		if e.Type == eventlog.EventMarker {
			all = append(all, e)
		}
	}
	return all[max(0, len(all)-RecentMarkerCount):]
}

// boundEntry returns en with its text cut to the recap's bounds.
func boundEntry(en Entry) Entry {
	parts := slices.Clone(en.Message.Parts)
	for i := range parts {
		p := &parts[i]
		switch p.Type {
		case PartText, PartReasoning:
			p.Text = capUTF8(p.Text, maxRecapTextBytes)
		case PartTool:
			p.Output = capUTF8(p.Output, maxRecapToolBytes)
			if len(p.Input) > maxRecapToolBytes {
				cut, _ := json.Marshal(capUTF8(string(p.Input), maxRecapToolBytes))
				p.Input = cut
			}
		}
	}
	en.Message.Parts = parts
	return en
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
