package editor

import "github.com/kandev/kandev/eventlog"

// turnClaim tells the editor's own turn from the turns the owner runs for
// its own reasons: an initial prompt, the continuation or the re-send of an
// interrupted turn, a maintenance turn, another process's queued input.
// Only the turn that carries the prompt the editor handed over answers the
// editor's session/prompt; every other turn is shown, never reported.
//
// The owner makes that turn recognisable by where it runs it: a prompt
// handed over through the job's Next becomes the first user turn to start
// after Next returned it (queued inputs run as "queued" turns), and a
// prompt given as the job's Prompt is the owner's first user turn when the
// owner has no follow-up to send first, which is the only way the editor
// starts an owner with a prompt (see session.prompt). A re-send of an
// interrupted user turn also starts as a user turn, which is why a turn is
// claimed only while a hand-over waits for it, never by its source alone.
type turnClaim struct {
	waiting bool   // a prompt was handed over; its turn has not started
	turn    string // the turn that carries it, once started
}

// handOver notes that the editor's prompt is on its way to the owner.
func (c *turnClaim) handOver() { c.waiting, c.turn = true, "" }

// withdraw forgets a hand-over that did not happen (the owner ended first).
func (c *turnClaim) withdraw() { c.waiting, c.turn = false, "" }

// see follows the owner's logged events, in order. It reports the stop
// reason once the editor's turn has ended.
func (c *turnClaim) see(e eventlog.Event) (stop string, ended bool) {
	switch {
	case e.Type == eventlog.EventTurnStarted && c.waiting && e.Source == eventlog.SourceUser:
		c.waiting, c.turn = false, e.TurnID
	case e.Type == eventlog.EventTurnEnded && c.turn != "" && e.TurnID == c.turn:
		c.turn = ""
		return e.StopReason, true
	}
	return "", false
}

// running reports whether the editor's turn has started and not ended.
func (c *turnClaim) running() bool { return c.turn != "" }

// lastUserTurn picks the editor's turn of an owner run given the prompt as
// its job's Prompt and no Next (owner.Dial becoming the owner here when
// the process that owned the session died): that run sends the prompt as
// its last user turn, after any re-send of an interrupted one and before
// the queued inputs it serves ("queued" turns).
type lastUserTurn struct {
	turn, stop string
}

func (l *lastUserTurn) see(e eventlog.Event) {
	switch {
	case e.Type == eventlog.EventTurnStarted && e.Source == eventlog.SourceUser:
		l.turn, l.stop = e.TurnID, ""
	case e.Type == eventlog.EventTurnEnded && e.TurnID == l.turn:
		l.stop = e.StopReason
	}
}
