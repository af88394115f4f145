package commands

import (
	"sync"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
)

// oneCancelLine keeps a turn a person cancelled (Ctrl-C, kandev cancel,
// stop, close --now) to one line in the text stream of the command that
// sent it: that command exits 130 with a line saying the turn was cancelled
// and what to run next, so the owner's prompt_cancel marker and the
// "(turn ended: cancelled)" after it would say it twice more. The marker is
// held until the next event: shown as usual unless that event is its
// turn's cancelled end. JSON output keeps every event.
func oneCancelLine(env *Env, emit func(eventlog.Event)) func(eventlog.Event) {
	if emit == nil || env.Out.JSON {
		return emit
	}
	var mu sync.Mutex
	var held *eventlog.Event
	return func(e eventlog.Event) {
		mu.Lock()
		h := held
		held = nil
		if h == nil && e.Type == eventlog.EventMarker && e.Kind == string(history.MarkerPromptCancel) && e.TurnID != "" {
			held = &e
			mu.Unlock()
			return
		}
		mu.Unlock()
		if h != nil {
			if cancelledEnd(e, h.TurnID) {
				return
			}
			emit(*h)
		}
		emit(e)
	}
}

// cancelledEnd reports whether e is the cancelled end of turn.
func cancelledEnd(e eventlog.Event, turn string) bool {
	return e.Type == eventlog.EventTurnEnded && e.TurnID == turn && e.StopReason == eventlog.StopCancelled
}
