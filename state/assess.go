package state

import "strings"

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
	// Next is one command that succeeds for the session as it is.
	Next string
	// Worktree is the session's worktree as assessed (nil when none).
	Worktree *Worktree
}

// Pause is the pause in force, nil when none.
func (a Assessment) Pause() *Pause { return a.Continuation.Pause }

// Assess decides, first from the verdict (Decide), then from the
// continuation rule (DecideContinuation), what resume would do now.
func Assess(s *Session, o Observation) Assessment {
	eff := *s
	if !o.OwnerAlive && o.TurnClosed && eff.State == StateRunning {
		// The log is the truth: the turn is complete.
		eff.State, eff.CurrentTurn = StateWaitingForInput, ""
	}
	if o.Worktree != nil {
		eff.Worktree = o.Worktree
	}
	var d ContinuationDecision
	switch {
	case IsTerminal(eff.State):
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
	a := Assessment{Verdict: v, Badge: Badge(&eff, o.OwnerAlive), Continuation: d, Worktree: eff.Worktree}
	a.LeaseHeld = o.Lease.Live(o.Now) && o.Lease.AttachedTo != o.Holder
	a.Attachable = v.IsResumable && !IsTerminal(eff.State) && !a.LeaseHeld
	a.Resumable = a.Attachable && (o.OwnerAlive || eff.Pause == nil)
	a.Next = nextCommand(&eff, a, o)
	return a
}

// nextCommand is one command that succeeds for the session as assessed:
// "..." stands for the user's message.
func nextCommand(s *Session, a Assessment, o Observation) string {
	id := s.ID
	wt := s.Worktree
	switch {
	case IsTerminal(s.State):
		return "kandev start --parent " + id + ` "..."`
	case o.OwnerAlive:
		return "kandev events " + id + " --follow"
	case wt != nil && !wt.Valid && wt.OffBranch:
		return "git -C " + shellWord(wt.Path) + " checkout " + shellWord(wt.Branch)
	case wt != nil && !wt.Valid:
		return "kandev start --parent " + id + ` "..."`
	case a.LeaseHeld:
		return "kandev prompt " + id + ` "..." --force`
	case a.Pause() != nil:
		return "kandev prompt " + id + ` "..."`
	case a.Interrupted || a.Reason == ReasonStaleExecution:
		return "kandev resume " + id
	case LimitLifted(s.Limit, o.Now):
		return "kandev recover " + id // the usage limit has reset: continue where it stopped
	}
	return "kandev prompt " + id + ` "..."`
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
