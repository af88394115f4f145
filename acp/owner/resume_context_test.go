package owner

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

func TestHistoryForContext_LongLogKeepsTheFirstRequestAndSaysMoreWereOmitted(t *testing.T) {
	h, _ := state.OpenHome(t.TempDir())
	log, _, _ := h.OpenLog("s", eventlog.OpenLogOptions{})
	log.Append(&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t1", Content: "the original request"})
	for i := 0; i < 3000; i++ {
		log.Append(&eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1", Content: strings.Repeat("a", 200)},
			&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t1", Content: strings.Repeat("u", 200)})
	}
	log.Close()
	evs, partial := historyForContext(h.LogPath("s"), 32<<10, 0)
	if !partial || evs[0].Content != "the original request" || len(evs) >= 6000 {
		t.Fatalf("partial=%v first=%q n=%d", partial, evs[0].Content, len(evs))
	}
	block := history.BuildResumeContextWindow(evs, "go on", "s", 32<<10, partial)
	if len(block) > 32<<10 || !strings.Contains(block, "[USER]: the original request") || !strings.Contains(block, "more than") {
		t.Fatalf("block of %d bytes:\n%.400s", len(block), block)
	}
}

// A rewind older than the window decides which user message opens the
// current epoch: the log is read on to it when the record's epoch says the
// log may hold one.
func TestHistoryForContext_ARewindBeforeTheWindowDecidesTheFirstRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		to    int64 // the rewind keeps the log through this seq (0: a clear)
		first string
	}{
		{"a clear drops the original request", 0, "after the rewind"},
		{"a rewind that keeps the first turn keeps it", 2, "the original request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := state.OpenHome(t.TempDir())
			log, _, _ := h.OpenLog("s", eventlog.OpenLogOptions{})
			log.Append(&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t1", Content: "the original request"},
				&eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: "end_turn"},
				&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t2", Content: "a request the rewind takes back"},
				eventlog.Rewind{Epoch: 1, ToSeq: tc.to}.Event(),
				&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t3", Content: "after the rewind"})
			for i := 0; i < 3000; i++ {
				log.Append(&eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t3", Content: strings.Repeat("a", 200)})
			}
			log.Close()
			evs, partial := historyForContext(h.LogPath("s"), 32<<10, 1)
			if !partial || len(evs) == 0 || evs[0].Content != tc.first {
				t.Fatalf("partial=%v, first %q, want %q", partial, evs[0].Content, tc.first)
			}
		})
	}
}
