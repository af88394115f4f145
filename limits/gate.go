package limits

import (
	"fmt"
	"time"

	"github.com/kandev/kandev/state"
)

// Gate is what happens to a turn about to start, given the agent's window.
type Gate int

const (
	// Go: the turn starts.
	Go Gate = iota
	// Warn: a person's own turn starts near the limit, with one line of
	// warning.
	Warn
	// Wait: a turn nobody follows waits for the window's reset, as a usage
	// limit does.
	Wait
)

// GateInput is what Decide looks at.
type GateInput struct {
	Window *state.RateWindow // as last reported (nil: never)
	// PauseAt is [limits] pause_at_percent (100 or more: off).
	PauseAt float64
	// Attended: a person follows the turn (their own prompt, resume);
	// recover, a scheduled wake and a queued --no-follow prompt are not.
	Attended bool
	Now      time.Time
}

// Decide is the pause_at_percent rule: a turn that would start with the
// window at or above PauseAt waits for the reset when nobody follows it,
// and warns when a person does. A window whose reset has passed (or that
// never said when it resets) holds nothing back: the agent's next report
// says where the new window stands, and a wait with no end would be a
// wait forever.
func Decide(in GateInput) Gate {
	w := in.Window
	switch {
	case in.PauseAt >= 100 || in.PauseAt <= 0:
		return Go
	case w == nil || w.UsedPercent == nil || *w.UsedPercent < in.PauseAt:
		return Go
	case w.ResetsAt == nil || !in.Now.Before(*w.ResetsAt):
		return Go
	case in.Attended:
		return Warn
	}
	return Wait
}

// WarnLine is the one line a person's own prompt near the limit gets.
func WarnLine(w *state.RateWindow, pauseAt float64) string {
	return fmt.Sprintf("the agent's %s (pause_at_percent %s); this turn may hit the limit", Describe(w), trimFloat(pauseAt))
}

// HeldReason is what a held turn's marker and error say.
func HeldReason(w *state.RateWindow, pauseAt float64) string {
	return fmt.Sprintf("unattended work held back before the agent's limit: %s (at or above [limits] pause_at_percent %s)", Describe(w), trimFloat(pauseAt))
}
