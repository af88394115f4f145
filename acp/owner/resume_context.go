package owner

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// The resume context: the conversation so far, read from the log, that the
// first prompt of a fresh agent session carries.

// resumeContext builds the history block for the first prompt after a
// fresh agent session replaced one that had history.
func (o *owner) resumeContext(request string) string {
	return ResumeContextFor(o.job.Home, o.s, request, o.job.Config.MaxReplayBytes())
}

// ResumeContextFor is the first prompt of a fresh agent session for s:
// request wrapped in the resume context of the conversation's current
// epoch, or request alone when that conversation is empty (after a clear,
// or a rewind to its start). A follow-up session (start --parent) reads its
// parent's log first; a fork has its own copy of the parent's conversation.
func ResumeContextFor(h *state.Home, s *state.Session, request string, maxBytes int) string {
	var evs []eventlog.Event
	partial := false
	if s.ParentID != "" && s.ForkedAt == 0 {
		parentEpoch := math.MaxInt // unknown: any number of rewinds
		if p, err := h.LoadSession(s.ParentID); err == nil {
			parentEpoch = p.Epoch
		}
		evs, partial = historyForContext(h.LogPath(s.ParentID), maxBytes, parentEpoch)
	}
	own, ownPartial := historyForContext(h.LogPath(s.ID), maxBytes, s.Epoch)
	evs = append(evs, own...)
	if !history.HasConversation(evs) && !partial && !ownPartial {
		return request
	}
	return history.BuildResumeContextWindow(evs, request, s.ID, maxBytes, partial || ownPartial)
}

// historyForContext reads the events the resume context is built from, of
// the log's current epoch only (what a rewind took back is not the agent's
// conversation): the whole epoch when it is small, else the first user
// message and the newest 2×maxBytes of lines, read from the end (the block
// itself is at most maxBytes, and each line is longer than the text it
// carries). Lines are filtered by type before they are decoded, and lines a
// rewind hid do not count. olderUnread says events between the two were not
// read. epoch is the epoch of the log's session record: the log holds no
// rewind numbered above it, so with epoch 0 (or the first rewind in the
// window) the first user message is the first in the log, and the log is
// not read on past it.
func historyForContext(path string, maxBytes, epoch int) (evs []eventlog.Event, olderUnread bool) {
	keep := func(line []byte) bool {
		switch gjson.GetBytes(line, "type").String() {
		case eventlog.EventUserMessage, eventlog.EventAgentMessage, eventlog.EventToolCall, eventlog.EventToolResult, eventlog.EventTurnStarted, eventlog.EventTurnEnded, eventlog.EventRewind,
			eventlog.EventChildStarted, eventlog.EventChildEnded:
			return true
		case eventlog.EventChildMessage: // a child's answer, not its stream
			return gjson.GetBytes(line, "source").Str == "reply"
		}
		return false
	}
	window := int64(2 * maxBytes)
	var tail []eventlog.Event
	firstSeq := int64(math.MaxInt64)
	fence := history.NewFence()
	whole := true
	_, err := eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		if window <= 0 {
			whole = false
			return false
		}
		if fence.Hides(gjson.GetBytes(line, "seq").Int()) {
			return true
		}
		window -= int64(len(line))
		if keep(line) {
			var e eventlog.Event
			if json.Unmarshal(line, &e) == nil {
				if e.Type == eventlog.EventRewind && e.Epoch == 1 {
					epoch = 0 // the first rewind there is: none is older
				}
				if fence.Visible(e) && e.Type != eventlog.EventRewind {
					tail = append(tail, e)
					firstSeq = e.Seq
				}
			}
		}
		return !fence.Hides(1) // after a clear nothing older is the conversation
	})
	if err != nil {
		return nil, false
	}
	slices.Reverse(tail)
	if whole {
		return tail, false
	}
	// The first user message of the current epoch: a rewind to before a
	// candidate drops it (a rewind a later one hid is always followed by one
	// that drops the same candidates, so hidden rewinds need no care).
	// Only user messages (until one is found) and rewinds decide it: the
	// other lines of a long log are passed over without decoding them, and
	// with no rewind older than the window the first user message is it.
	var first []eventlog.Event
	_, _ = eventlog.ScanLines(path, func(line []byte) bool {
		if !bytes.Contains(line, rewindLine) && (len(first) > 0 || !bytes.Contains(line, userMessageLine)) {
			return true
		}
		e, ok := eventlog.DecodeEvent(line)
		if !ok {
			return true
		}
		switch {
		case e.Seq >= firstSeq || fence.Hides(e.Seq): // both grow with seq: nothing later counts
			return false
		case e.Type == eventlog.EventRewind && len(first) > 0 && history.RewindTo(e) < first[0].Seq:
			first = first[:0]
		case e.Type == eventlog.EventUserMessage && len(first) == 0:
			first = append(first, e)
			return epoch > 0
		}
		return true
	})
	return append(first, tail...), true
}

// How the log writer writes the type of the events the resume context's
// first message depends on.
var (
	rewindLine      = []byte(`"type":"` + eventlog.EventRewind + `"`)
	userMessageLine = []byte(`"type":"` + eventlog.EventUserMessage + `"`)
)
