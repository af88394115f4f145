package verdict

import (
	"strings"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// Assessment answers "can resume act on this session now", with everything
// status, list and resume show about it. It is a function of the record and
// an Observation only.
type Assessment struct {
	Verdict
	Badge      string
	Attachable bool
	// Resumable: resume acts on the session now and succeeds as far as
	// kandev can tell without launching the agent (list --resumable).
	Resumable bool
	// LeaseHeld: another holder's live lease makes resume a conflict.
	LeaseHeld bool
	// Continuation is what happens to an interrupted turn; its Pause is the
	// pause in force after this look (recorded, or found now).
	Continuation ContinuationDecision
	// Next is one command that succeeds for the session as it is, and the
	// useful one; Why says in words what the session needs.
	Next string
	Why  string
	// Worktree is the session's worktree as assessed (nil when none).
	Worktree *worktree.Worktree
}

// Pause is the pause in force, nil when none.
func (a Assessment) Pause() *state.Pause { return a.Continuation.Pause }

// Assess decides, first from the verdict (Decide), then from the
// continuation rule (DecideContinuation), what resume would do now.
func Assess(s *state.Session, o Observation) Assessment {
	eff := *s
	if !o.OwnerAlive && o.TurnClosed && eff.State == state.StateRunning {
		// The log is the truth: the turn is complete.
		eff.State, eff.CurrentTurn = state.StateWaitingForInput, ""
	}
	if o.Worktree != nil {
		eff.Worktree = o.Worktree
	}
	var d ContinuationDecision
	switch {
	case state.IsTerminal(eff.State):
		eff.Pause = nil
	case o.OwnerAlive:
		d.Pause = eff.Pause // the live owner keeps it up to date
	default:
		d = DecideContinuation(&eff, eff.Worktree, o.Policy, o.Now)
		eff.Pause = d.Pause
	}
	v := Decide(&eff, o)
	// Interrupted: cut off and not yet repaired (Decide), or repaired and
	// still owed its continuation.
	v.Interrupted = v.Interrupted || d.Turn != ""
	if !o.OwnerAlive && eff.Pause != nil {
		v.IsResumable = false // resume refuses a paused session (exit 5): a prompt lifts it
	}
	a := Assessment{Verdict: v, Badge: Badge(&eff, o.OwnerAlive), Continuation: d, Worktree: eff.Worktree}
	a.LeaseHeld = o.Lease.Live(o.Now) && o.Lease.AttachedTo != o.Holder
	a.Attachable = v.IsResumable && !state.IsTerminal(eff.State) && !a.LeaseHeld
	a.Resumable = a.Attachable && (o.OwnerAlive || eff.Pause == nil)
	a.Next, a.Why = nextCommand(&eff, a, o)
	return a
}

// UntilTurnEnds is the --until of a kandev wait that returns when a running
// turn is over, however it ends.
const UntilTurnEnds = BadgeIdle + "," + BadgeWaitingForPermission + "," + BadgeNeedsResume + "," + BadgePaused + "," + BadgeStopped + "," + BadgeFailed

// nextCommand is one command that succeeds for the session as assessed
// and is the one a person wants next ("..." stands for the user's
// message), and why. A warm owner takes a prompt at once; following its
// events would block until its linger ends.
func nextCommand(s *state.Session, a Assessment, o Observation) (next, why string) {
	id := s.ID
	wt := s.Worktree
	force := ""
	if a.LeaseHeld {
		force = " --force"
	}
	switch {
	case state.IsTerminal(s.State):
		return "kandev start --parent " + id + ` "..."`, "finished: a new session can carry on from its history"
	case o.OwnerAlive && a.Badge == BadgeWaitingForPermission && len(s.ParkedRequests) > 0 && s.ParkedRequests[0].Kind == state.ParkedQuestion:
		// approve and deny answer the oldest parked request: a question is answered, not approved.
		return "kandev answer " + id + " VALUE", "the agent asks a question (kandev deny " + id + " declines it)"
	case o.OwnerAlive && a.Badge == BadgeWaitingForPermission:
		return "kandev approve " + id, "the turn waits for a permission answer (kandev deny " + id + " refuses it)"
	case o.OwnerAlive && a.Badge == BadgeRunning:
		return "kandev wait " + id + " --until " + UntilTurnEnds, "a kandev process is running a turn"
	case o.OwnerAlive:
		return "kandev prompt " + id + ` "..."` + force, "a kandev process keeps the agent running: a prompt goes straight to it"
	case wt != nil && !wt.Valid && wt.OffBranch:
		return "git -C " + shellWord(wt.Path) + " checkout " + shellWord(wt.Branch), wt.Problem
	case wt != nil && !wt.Valid:
		return "kandev start --parent " + id + ` "..."`, wt.Problem
	case a.LeaseHeld:
		return "kandev prompt " + id + ` "..." --force`, "another holder (" + o.Lease.AttachedTo + ") is attached"
	case a.Pause() != nil:
		return "kandev prompt " + id + ` "..."`, "automatic continuation is paused (" + a.Pause().Reason + "): a prompt carries on"
	case a.Reason == ReasonStaleExecution:
		return "kandev resume " + id, "its agent outlived its owner: resume stops it and carries on"
	case s.Limit != nil && s.Limit.Held && !LimitLifted(s.Limit, o.Now):
		return "kandev prompt " + id + ` "..."`, "unattended work waits for the agent's usage window to reset (kandev recover continues it then); a prompt of yours goes now"
	case a.Interrupted && s.InitialPrompt != "":
		return "kandev resume " + id, "the first prompt never reached the agent: resume sends it"
	case a.Interrupted:
		return "kandev resume " + id, "a turn was cut off: resume continues it once"
	case LimitLifted(s.Limit, o.Now):
		return "kandev recover " + id, "the usage limit has reset: recover continues where it stopped"
	case s.Stopped:
		return "kandev prompt " + id + ` "..."`, "stopped: nothing runs until a prompt"
	}
	return "kandev prompt " + id + ` "..."`, "nothing to resume: the next prompt restores the agent"
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
