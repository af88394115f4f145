package acp

import (
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/state"
)

// Pause reasons (SPEC 3.4): why an interrupted turn is not continued automatically.
const (
	PausePermission = "a permission request was pending when the owner died"
	PauseProfile    = "the agent profile or its command changed since the turn started"
	PauseStopped    = "the session was stopped explicitly (kandev stop)"
	PauseBudget     = "the automatic continuation budget is spent"
)

// ContinuationInput is what the continuation decision depends on.
type ContinuationInput struct {
	Session           *state.Session
	Command           []string // the profile's command now
	PermissionPending bool     // a permission request was pending when the owner died
	AutoContinue      bool     // [session.restart] auto_continue
	NoContinue        bool     // resume --no-continue
	MaxAttempts       int
	Window            time.Duration
	Now               time.Time
}

// ContinuationDecision says whether an interrupted turn gets its one
// automatic continuation, and if not whether that is a pause (an operator
// must look) or simply switched off.
type ContinuationDecision struct {
	Continue bool
	Pause    string // "" unless paused
}

// DecideContinuation is the pure rule of SPEC 3.4, first match wins: off by
// flag or config; paused for a pending permission, a changed agent command,
// an explicit stop, or a spent budget; otherwise continue.
func DecideContinuation(in ContinuationInput) ContinuationDecision {
	s := in.Session
	switch {
	case in.NoContinue || !in.AutoContinue:
		return ContinuationDecision{}
	case in.PermissionPending:
		return ContinuationDecision{Pause: PausePermission}
	case len(s.AgentCommand) > 0 && !slices.Equal(s.AgentCommand, in.Command):
		return ContinuationDecision{Pause: PauseProfile}
	case s.Stopped:
		return ContinuationDecision{Pause: PauseStopped}
	case attemptsWithin(s.RestartAttempts, in.Now, in.Window) >= in.MaxAttempts:
		return ContinuationDecision{Pause: fmt.Sprintf("%s (%d continuations within %s)", PauseBudget, in.MaxAttempts, in.Window)}
	}
	return ContinuationDecision{Continue: true}
}

func attemptsWithin(ts []time.Time, now time.Time, window time.Duration) int {
	n := 0
	for _, t := range ts {
		if now.Sub(t) < window {
			n++
		}
	}
	return n
}

// pruneAttempts keeps the attempts still inside the window.
func pruneAttempts(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}
