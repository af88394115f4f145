// Package prune decides which finished sessions kandev prune deletes, and in
// what order, as a function of data: the sessions in the home, the clock,
// the user's filter and what the checks that need I/O (a live owner,
// another holder's lease, a worktree with changes) found. It deletes
// nothing: the command carries the plan out, and plans again when a check
// made under the session's locks keeps a session the plan meant to delete.
package prune

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/kandev/kandev/state"
)

// Filter is what the user asked to prune: sessions with no activity for
// OlderThan (0: any age) in State ("": any finished state).
type Filter struct {
	OlderThan time.Duration
	State     string
}

// Facts is everything a plan reads.
type Facts struct {
	// Sessions is every session still in the home, in listing order (the
	// order the plan deletes in, within one round).
	Sessions []*state.Session
	Now      time.Time
	Filter   Filter
	// Kept names the sessions a check found must stay, with why.
	Kept map[string]string
}

// Step is one session to delete.
type Step struct {
	Session *state.Session
	// Sharer is another session that stays and works in the same
	// worktree, or "": then the worktree kandev made goes with this one.
	Sharer string
}

// Plan is what to delete, in order, and why the other candidates stay.
type Plan struct {
	Delete []Step
	Kept   map[string]string // id -> why it stays
}

// NewPlan decides what prune deletes. Only a finished session that matches
// the filter is a candidate, and a candidate stays when Facts.Kept names
// it, or while a session started from it (start --parent) stays: that
// session's resume context reads its log, so a chain goes child first. A
// worktree goes with the last session that works in it.
func NewPlan(f Facts) Plan {
	p := Plan{Kept: map[string]string{}}
	var pending []*state.Session
	for _, s := range f.Sessions {
		if !candidate(s, f) {
			continue
		}
		if why, ok := f.Kept[s.ID]; ok {
			p.Kept[s.ID] = why
			continue
		}
		pending = append(pending, s)
	}
	followUps := followUpsOf(f.Sessions)
	gone := map[string]bool{}
	// Rounds repeat while they delete something: each takes the sessions
	// no remaining session was started from.
	for progress := true; progress; {
		progress = false
		var waiting []*state.Session
		for _, s := range pending {
			if parentKept(s.ID, followUps, gone) != "" {
				waiting = append(waiting, s)
				continue
			}
			progress = true
			p.Delete = append(p.Delete, Step{Session: s, Sharer: worktreeSharer(s, f.Sessions, gone)})
			gone[s.ID] = true
		}
		pending = waiting
	}
	for _, s := range pending {
		p.Kept[s.ID] = parentKept(s.ID, followUps, gone)
	}
	return p
}

// candidate reports whether s is one the user asked to prune.
func candidate(s *state.Session, f Facts) bool {
	if !state.IsTerminal(s.State) || f.Filter.State != "" && s.State != f.Filter.State {
		return false
	}
	return f.Filter.OlderThan <= 0 || f.Now.Sub(s.LastActivityAt) >= f.Filter.OlderThan
}

// worktreeSharer is another session, not pruned, that records the same
// worktree as s (a fork made without --worktree, a session started inside
// it), or "": a worktree goes only with the last session that works in it.
func worktreeSharer(s *state.Session, all []*state.Session, gone map[string]bool) string {
	if s.Worktree == nil || s.Worktree.Path == "" {
		return ""
	}
	for _, o := range all {
		if o.ID != s.ID && !gone[o.ID] && o.Worktree != nil && filepath.Clean(o.Worktree.Path) == filepath.Clean(s.Worktree.Path) {
			return o.ID
		}
	}
	return ""
}

// followUpsOf maps each session id to the sessions started from it with
// start --parent, in order. Forks are not among them: a fork's log holds
// its own copy of the conversation.
func followUpsOf(all []*state.Session) map[string][]string {
	out := map[string][]string{}
	for _, s := range all {
		if s.ParentID != "" && s.ForkedAt == 0 {
			out[s.ParentID] = append(out[s.ParentID], s.ID)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// parentKept says why session id must stay while a session started from
// it (followUps) is not gone, or "" when none needs it.
func parentKept(id string, followUps map[string][]string, gone map[string]bool) string {
	for _, child := range followUps[id] {
		if !gone[child] {
			return "session " + child + " was started from it (kandev start --parent) and reads its history; prune " + child + " first"
		}
	}
	return ""
}
