package owner

import (
	"fmt"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// FinishRewind appends the fence of the rewind s holds as pending, unless
// the log already ends with it (a crash came after the append, before the
// record was cleared), and clears it. The caller owns the session and holds
// log open: an owner at its start, or a rewind or a repair (package
// acp/surgery). No epoch is ever fenced twice.
func FinishRewind(h *state.Home, log *eventlog.EventLog, s *state.Session) error {
	r := s.RewindPending
	if r == nil {
		return nil
	}
	if !fenceLogged(h.LogPath(s.ID), r.Epoch) {
		summary := fmt.Sprintf("Rewound to seq %d (epoch %d): the agent continues as if nothing after it had been said; files on disk were not rewound.", r.ToSeq, r.Epoch)
		if r.ToSeq == 0 {
			summary = fmt.Sprintf("Cleared (epoch %d): the agent starts over with no history; files on disk were not rewound.", r.Epoch)
		}
		m := history.NewMarker(history.MarkerSessionRewound, summary, "")
		if err := log.AppendSync(r.Event(), &m); err != nil {
			return fmt.Errorf("rewind %s: %w", s.ID, err)
		}
	}
	ns, err := h.UpdateSession(s.ID, func(s *state.Session) error { s.RewindPending = nil; return nil })
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

// fenceLogged reports whether the log already holds the rewind of epoch,
// reading back from the end only past what may follow it (a marker, the
// torn-line note) to the first turn or message.
func fenceLogged(path string, epoch int) bool {
	found := false
	_, _ = eventlog.ScanEventsBackward(path, func(e eventlog.Event, _ []byte) bool {
		switch e.Type {
		case eventlog.EventRewind:
			found = e.Epoch == epoch
			return false
		case eventlog.EventTurnStarted, eventlog.EventTurnEnded, eventlog.EventUserMessage, eventlog.EventAgentMessage:
			return false
		}
		return true
	})
	return found
}
