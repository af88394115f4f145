package e2e_test

import "github.com/kandev/kandev/eventlog"

// busyTurn starts the sleeping turn of session id in the background and
// waits until it runs; it returns that turn's id and the command's result.
func (w *world) busyTurn(id string, flags []string) (string, <-chan result) {
	w.t.Helper()
	return w.busyTurnWith(id, append(flags, sleepingTurn)...)
}

// busyTurnWith is busyTurn with the prompt's arguments args.
func (w *world) busyTurnWith(id string, args ...string) (string, <-chan result) {
	w.t.Helper()
	done := w.runAsync(append([]string{"prompt", id}, args...)...)
	waitForRunningTurn(w.t, w, id)
	return w.session(id).CurrentTurn, done
}

// steered are the user messages that joined a running turn.
func steered(evs []eventlog.Event) []eventlog.Event {
	return ofSource(evs, eventlog.EventUserMessage, eventlog.SourceSteer)
}
