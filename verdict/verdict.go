// Package verdict is the policy status, list and resume apply to a session's
// record and probes: the resume verdict, the badge, whether an interrupted
// turn is continued or paused, and what to run next. Pure functions of data,
// each with a table test (see docs/resume.md).
package verdict

import (
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// Verdict reasons (see docs/resume.md).
const (
	ReasonAgentRunning       = "agent_running"
	ReasonStaleExecution     = "stale_execution"
	ReasonTerminal           = "terminal"
	ReasonAgentNotRunning    = "agent_not_running"
	ReasonAgentNotRunningNew = "agent_not_running_fresh_start"
	ReasonNotStarted         = "not_started"
)

// Observation is what the verdict depends on besides the record: the
// probes (owner lock, recorded agent pid, log, worktree, lease), the
// configuration a continuation is checked against, and the clock.
type Observation struct {
	OwnerAlive bool
	AgentAlive bool
	// TurnClosed: the log shows the record's current turn ended (the owner
	// died after writing turn_ended, before updating the record).
	TurnClosed bool
	// Worktree is the session's worktree as checked now; nil: use the record's.
	Worktree *worktree.Worktree
	Lease    *state.Lease // the attach lease as read now
	Holder   string       // who would take the lease (resume's --holder)
	Policy   ContinuationPolicy
	Now      time.Time
}

// Verdict is the resume verdict (docs/resume.md).
type Verdict struct {
	NeedsResume bool   `json:"needs_resume"`
	IsResumable bool   `json:"is_resumable"`
	Reason      string `json:"reason"`
	// Interrupted is set when a turn was running when the owner died.
	Interrupted bool `json:"interrupted"`
}

// Decide computes the verdict; the first matching rule wins.
func Decide(s *state.Session, o Observation) Verdict {
	v := decide(s, o)
	if s.Worktree != nil && !s.Worktree.Valid {
		v.IsResumable = false
	}
	return v
}

func decide(s *state.Session, o Observation) Verdict {
	// A first prompt not yet sent to the agent is sent by the next resume.
	pendingStart := s.InitialPrompt != "" && !state.IsTerminal(s.State)
	interrupted := !o.OwnerAlive && ((s.State == state.StateRunning || s.State == state.StateStarting) && s.AgentLaunched || pendingStart)
	switch {
	case o.OwnerAlive:
		return Verdict{NeedsResume: false, IsResumable: !state.IsTerminal(s.State), Reason: ReasonAgentRunning}
	case o.AgentAlive:
		return Verdict{NeedsResume: false, IsResumable: !state.IsTerminal(s.State), Reason: ReasonStaleExecution, Interrupted: interrupted}
	case state.IsTerminal(s.State):
		return Verdict{NeedsResume: false, IsResumable: false, Reason: ReasonTerminal}
	case s.ResumeToken != "" && isActive(s.State):
		return Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunning, Interrupted: interrupted}
	case s.AgentLaunched && isActive(s.State) || pendingStart:
		return Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunningNew, Interrupted: interrupted}
	}
	return Verdict{NeedsResume: false, IsResumable: !state.IsTerminal(s.State), Reason: ReasonNotStarted}
}

// Badges (see docs/resume.md).
const (
	BadgeDone                 = "done"
	BadgeFailed               = "failed"
	BadgeCancelled            = "cancelled"
	BadgePaused               = "paused"
	BadgeNeedsResume          = "needs-resume"
	BadgeWaitingForPermission = "waiting-for-permission"
	BadgeRunning              = "running"
	BadgeStopped              = "stopped"
	BadgeIdle                 = "idle"
	BadgeUnknown              = "unknown"
)

// Badge is the one word a client shows for a session; first match wins.
func Badge(s *state.Session, ownerAlive bool) string {
	switch {
	case s.State == state.StateCompleted:
		return BadgeDone
	case s.State == state.StateFailed:
		return BadgeFailed
	case s.State == state.StateCancelled:
		return BadgeCancelled
	case s.Pause != nil || s.PulledCwd != "":
		return BadgePaused
	case !ownerAlive && s.Limit != nil && s.Limit.Held:
		// Unattended work held back before the agent's limit: what it holds
		// (an interrupted turn, a queued prompt) waits for the reset.
		return BadgeWaitingForLimit
	case !ownerAlive && (s.State == state.StateRunning || s.State == state.StateStarting):
		return BadgeNeedsResume
	case !ownerAlive && s.Interrupted != nil && s.Interrupted.Turn != s.ContinuedTurn && s.InitialPrompt == "":
		return BadgeNeedsResume
	case !ownerAlive && s.InitialPrompt != "":
		return BadgeNeedsResume // the first prompt was never sent: resume sends it
	case ownerAlive && s.PermissionPending:
		return BadgeWaitingForPermission
	case ownerAlive && (s.State == state.StateRunning || s.State == state.StateStarting):
		return BadgeRunning
	case s.Limit != nil:
		return BadgeWaitingForLimit
	case s.Stopped:
		return BadgeStopped
	case s.State == state.StateWaitingForInput || s.State == state.StateCreated:
		return BadgeIdle
	}
	return BadgeUnknown
}

// isActive reports whether a session in state may still have an agent to
// come back to: STARTING, RUNNING or WAITING_FOR_INPUT.
func isActive(st string) bool {
	return st == state.StateStarting || st == state.StateRunning || st == state.StateWaitingForInput
}
