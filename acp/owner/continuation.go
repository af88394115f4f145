package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// ContinuationPolicy is the part of the continuation rule that comes from
// the configuration, the agent profile and the permission mode.
func ContinuationPolicy(cfg *config.Config, command []string, mode string, noContinue bool) verdict.ContinuationPolicy {
	return verdict.ContinuationPolicy{
		AutoContinue: cfg.AutoContinue(), NoContinue: noContinue,
		MaxAttempts: cfg.MaxAttempts(), Window: time.Duration(cfg.WindowSeconds()) * time.Second,
		Command: command, PermissionMode: mode, MaxCost: cfg.Session.MaxCost,
	}
}

// settlePause records the pause transitions of d: a pause whose cause is
// gone clears with an info marker, a pause found now is recorded with a
// warning marker. wt is the worktree as checked now (nil when none).
func (o *owner) settlePause(d verdict.ContinuationDecision, wt *worktree.Worktree) {
	if d.Cleared != nil {
		o.update(func(s *state.Session) { s.Pause = nil })
		o.marker(history.MarkerContinuationResumed, "Continuation resumed: "+d.ClearedBecause+".", "")
	}
	if d.Pause != nil && (o.s.Pause == nil || *o.s.Pause != *d.Pause) {
		o.pause(*d.Pause, pauseAdvice(o.s.ID, wt, d.Pause.Kind))
	}
}

// pause holds the interrupted turn back until its cause is gone or an
// operator sends a prompt.
func (o *owner) pause(p state.Pause, advice string) {
	o.update(func(s *state.Session) { s.Pause = &p })
	m := history.NewMarker(history.MarkerContinuationPaused, "Automatic continuation paused: "+p.Reason+"; "+advice+".", "")
	m.TurnID = p.Turn
	m.Data, _ = json.Marshal(map[string]string{"pause_kind": p.Kind})
	o.append(true, &m)
}

// pauseAdvice says what the operator does about a pause of this kind; wt
// is the worktree as checked now (nil when none).
func pauseAdvice(id string, wt *worktree.Worktree, kind string) string {
	switch {
	case kind == state.PauseWorktree && wt != nil && wt.OffBranch:
		return fmt.Sprintf("check out branch %s in %s and run kandev resume %s again, or start a follow-up with kandev start --parent %s", wt.Branch, wt.Path, id, id)
	case kind == state.PauseWorktree:
		return "restore it, or start a follow-up with kandev start --parent " + id
	case kind == state.PauseCost:
		return costAdvice
	case kind == state.PauseBudget:
		return fmt.Sprintf("inspect it with kandev recap %s, then send a prompt (kandev prompt %s \"...\"), or run kandev resume %s again once the window has passed", id, id, id)
	}
	return fmt.Sprintf("inspect it with kandev recap %s, then send a prompt (kandev prompt %s \"...\")", id, id)
}

// spendAttempt counts the follow-up of an interrupted turn against the
// continuation budget before it is tried, so an owner that dies each time
// before sending it still runs the budget down (and then pauses).
func (o *owner) spendAttempt() {
	now := o.now()
	window := time.Duration(o.job.Config.WindowSeconds()) * time.Second
	o.update(func(s *state.Session) {
		s.RestartAttempts = append(verdict.PruneAttempts(s.RestartAttempts, now, window), now)
	})
}

// markFollowedUp records the one follow-up of interrupted turn turn as
// sent (or dropped by a Ctrl-C): it is never sent again. It is written
// once the follow-up's prompt_sent is on disk, never before, so a crash in
// between leaves the follow-up owed, not lost.
func (o *owner) markFollowedUp(turn string) {
	o.update(func(s *state.Session) { s.ContinuedTurn, s.Interrupted = turn, nil })
}

// takeOverPause lifts a pause (and an explicit stop) when the operator sends
// a prompt: the interrupted turn is then never continued automatically.
func (o *owner) takeOverPause() {
	p := o.s.Pause
	if !o.s.Stopped && p == nil && o.s.Interrupted == nil {
		return
	}
	o.update(func(s *state.Session) { s.Stopped, s.Pause, s.Interrupted = false, nil, nil })
	if p != nil {
		o.marker(history.MarkerContinuationResumed, "The pause of turn "+p.Turn+" is lifted by the operator's prompt; that turn is not continued automatically.", "")
	}
}

// SettlePause re-checks a session's pause when no owner runs it (status
// looks): a pause whose cause is gone clears with an info marker, one found
// now is recorded. It does nothing while an owner is alive.
func SettlePause(h *state.Home, id string, pol verdict.ContinuationPolicy, now time.Time) error {
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	defer held.Release()
	s, err := h.LoadSession(id) // under the lock held holds
	if err != nil || state.IsTerminal(s.State) {
		return err
	}
	var wt *worktree.Worktree
	if s.Worktree != nil {
		w := worktree.CheckWorktree(*s.Worktree)
		wt = &w
	}
	d := verdict.DecideContinuation(s, wt, pol, now)
	if d.Cleared == nil && (d.Pause == nil || s.Pause != nil && *s.Pause == *d.Pause) {
		return nil
	}
	log, torn, err := held.Log()
	if err != nil {
		return err
	}
	o := &owner{job: Job{Home: h}, s: s, log: log, res: &Result{}}
	if torn > 0 {
		o.marker(history.MarkerSessionRepaired, fmt.Sprintf("Truncated a torn last log line (%d bytes) left by a crash.", torn), "")
	}
	if wt != nil {
		o.update(func(s *state.Session) { s.Worktree = wt })
	}
	o.settlePause(d, wt)
	return nil
}
