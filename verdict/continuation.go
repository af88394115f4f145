package verdict

import (
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// ContinuationPolicy is the configuration and present facts a continuation
// is checked against.
type ContinuationPolicy struct {
	AutoContinue bool // [session.restart] auto_continue
	NoContinue   bool // resume --no-continue
	MaxAttempts  int
	Window       time.Duration
	// Command is the agent profile's command now; nil is unknown and not compared.
	Command []string
	// PermissionMode is the mode a relaunch would run under; "" is unknown.
	PermissionMode string
	// MaxCost is [session] max_cost; 0 is no cap.
	MaxCost float64
}

// ContinuationDecision is what happens to the awaiting interrupted turn.
type ContinuationDecision struct {
	Turn     string // the awaiting turn, "" when none
	Continue bool   // send the one continuation now
	// Drop: the continuation is switched off (config or flag): the turn
	// stays repaired and is never continued.
	Drop    bool
	Pause   *state.Pause // the pause in force, nil when none
	Cleared *state.Pause // the recorded pause whose cause is gone
	// ClearedBecause says, for a user, why Cleared no longer holds.
	ClearedBecause string
}

// DecideContinuation is the rule of automatic continuation, first match
// wins: nothing awaits; a broken worktree pauses; switched off by config or
// flag; paused for an unanswered permission request, a maintenance turn, a
// changed agent command, a changed permission mode, an explicit stop, a spent
// max_cost or a spent budget; otherwise continue. wt is the worktree as
// checked now (nil when none).
func DecideContinuation(s *state.Session, wt *worktree.Worktree, p ContinuationPolicy, now time.Time) ContinuationDecision {
	turn, permissionOpen := s.AwaitingContinuation()
	d := ContinuationDecision{Turn: turn}
	pause := func(kind, reason string) { d.Pause = &state.Pause{Kind: kind, Reason: reason, Turn: turn} }
	spent, capped := CostCapReached(s.Usage, p.MaxCost)
	afterReset := s.AfterReset != nil && s.AfterReset.Exhausted != ""
	switch {
	case turn == "" && afterReset:
		// Unattended work after a reset spent its bound: queued prompts
		// nobody follows wait for a person too.
		pause(state.PauseAfterReset, s.AfterReset.Exhausted)
	case turn == "":
	case wt != nil && !wt.Valid:
		pause(state.PauseWorktree, "the worktree is not usable: "+wt.Problem)
	case p.NoContinue || !p.AutoContinue:
		d.Drop = true
	case permissionOpen:
		pause(state.PausePermissionPending, "a permission request was pending when the turn was cut off")
	case s.Interrupted != nil && s.Interrupted.Turn == turn && s.Interrupted.Maintenance:
		pause(state.PauseMaintenance, "the interrupted turn was a maintenance turn (kandev compact); run it again if it is still wanted")
	case len(s.AgentCommand) > 0 && p.Command != nil && !slices.Equal(s.AgentCommand, p.Command):
		pause(state.PauseAgentChanged, "the agent profile or its command changed since the turn started")
	case s.TurnPermissionMode != "" && p.PermissionMode != "" && s.TurnPermissionMode != p.PermissionMode:
		pause(state.PausePermissionModeChanged, fmt.Sprintf("the turn ran under permission mode %s, the mode now is %s", s.TurnPermissionMode, p.PermissionMode))
	case setup.SetupDiffers(s.TurnSetup, s.Setup) != "":
		pause(state.PauseSetupChanged, "the agent's setup changed: "+setup.SetupDiffers(s.TurnSetup, s.Setup))
	case s.Stopped:
		pause(state.PauseStopped, "the session was stopped explicitly (kandev stop)")
	case capped:
		pause(state.PauseCost, spent)
	case afterReset:
		pause(state.PauseAfterReset, s.AfterReset.Exhausted)
	case AttemptsWithin(s.RestartAttempts, now, p.Window) >= p.MaxAttempts:
		pause(state.PauseBudget, fmt.Sprintf("the automatic continuation budget is spent (%d continuations within %s)", p.MaxAttempts, p.Window))
	default:
		d.Continue = true
	}
	if s.Pause != nil && (d.Pause == nil || d.Pause.Kind != s.Pause.Kind || d.Pause.Turn != s.Pause.Turn) {
		d.Cleared = s.Pause
		d.ClearedBecause = clearedBecause(s, wt, p, d)
	}
	if d.Pause != nil && s.Pause != nil && *d.Pause == *s.Pause {
		d.Pause = s.Pause
	}
	return d
}

// clearedBecause says why the recorded pause no longer holds.
func clearedBecause(s *state.Session, wt *worktree.Worktree, p ContinuationPolicy, d ContinuationDecision) string {
	switch {
	case d.Turn == "" || d.Turn != s.Pause.Turn:
		return "no interrupted turn waits for it any more"
	case d.Drop:
		return "automatic continuation is switched off, the turn stays as it ended"
	}
	switch s.Pause.Kind {
	case state.PauseWorktree:
		if wt != nil && wt.Branch != "" {
			return fmt.Sprintf("the worktree %s is back on branch %s", wt.Path, wt.Branch)
		}
		return "the worktree is usable again"
	case state.PauseAgentChanged:
		return "the agent command is the one the turn started with again"
	case state.PausePermissionModeChanged:
		return "the permission mode is " + p.PermissionMode + " again, as when the turn ran"
	case state.PauseBudget:
		return "the continuation budget has room again (the window has passed)"
	case state.PauseCost:
		return "the session's spending is under [session] max_cost again"
	case state.PauseSetupChanged:
		return "the agent's setup is the one the turn ran under again"
	}
	return "its cause is gone"
}

// AttemptsWithin counts the continuation times inside the window before now.
func AttemptsWithin(ts []time.Time, now time.Time, window time.Duration) int {
	return len(PruneAttempts(ts, now, window))
}

// PruneAttempts keeps the continuation times still inside the window.
func PruneAttempts(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}
