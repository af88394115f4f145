package owner

import (
	"sort"
	"time"

	"github.com/kandev/kandev/state"
)

// Warm is one lingering owner of the home, as the pool sees it.
type Warm struct {
	ID string
	// LastActivity is its session's last activity: the least recent goes first.
	LastActivity time.Time
	// Idle: no turn runs and nothing is queued; only an idle owner is closed.
	Idle bool
}

// Evictions are the warm owners to close so that one more can linger with
// at most max in the pool: the least recently used idle ones first. Busy
// owners are never closed; when they alone fill the pool, it stays over.
func Evictions(warm []Warm, max int) []string {
	over := len(warm) + 1 - max
	if over <= 0 {
		return nil
	}
	idle := make([]Warm, 0, len(warm))
	for _, w := range warm {
		if w.Idle {
			idle = append(idle, w)
		}
	}
	sort.SliceStable(idle, func(i, j int) bool {
		if !idle[i].LastActivity.Equal(idle[j].LastActivity) {
			return idle[i].LastActivity.Before(idle[j].LastActivity)
		}
		return idle[i].ID < idle[j].ID
	})
	var out []string
	for _, w := range idle[:min(over, len(idle))] {
		out = append(out, w.ID)
	}
	return out
}

// warmOwners are the home's lingering owners other than self: a session
// whose owner lock is held, whose record has warm_until, and that no close
// is queued for (one being closed already leaves the pool). Only the
// records of live owners are read: the pool is a few sessions of many.
func warmOwners(h *state.Home, self string) []Warm {
	ids, err := h.LiveOwners()
	if err != nil {
		return nil
	}
	var out []Warm
	for _, id := range ids {
		if id == self {
			continue
		}
		s, err := h.LoadSession(id)
		if err != nil || s.WarmUntil == nil {
			continue
		}
		ins, _ := h.ReadInbox(s.ID, s.InboxOffset)
		closing, queued := false, false
		for _, in := range ins {
			closing = closing || in.Kind == state.InputClose
			queued = queued || in.Kind == state.InputPrompt
		}
		if closing {
			continue
		}
		out = append(out, Warm{ID: s.ID, LastActivity: s.LastActivityAt, Idle: s.CurrentTurn == "" && !queued})
	}
	return out
}

// joinWarmPool makes room for this owner to linger: under the home's warm
// lock it closes the least recently used idle warm owners over max_warm
// (a close input each, which they serve at once), then marks itself warm
// until until before the lock is released, so the next owner counts it.
func (o *owner) joinWarmPool(until time.Time) {
	h := o.job.Home
	unlock, err := h.LockWarmPool()
	if err == nil {
		defer unlock()
		for _, id := range Evictions(warmOwners(h, o.s.ID), o.job.Config.MaxWarm()) {
			_ = h.Enqueue(id, &state.Input{Kind: state.InputClose})
		}
	}
	o.update(func(s *state.Session) { s.WarmUntil = &until })
}

// LiveSessions are the sessions of the home whose owner lock is held, oldest
// activity first. Only their records are read.
func LiveSessions(h *state.Home) []string {
	ids, err := h.LiveOwners()
	if err != nil {
		return nil
	}
	var ss []*state.Session
	for _, id := range ids {
		if s, err := h.LoadSession(id); err == nil {
			ss = append(ss, s)
		}
	}
	state.SortByActivity(ss) // newest first
	out := make([]string, 0, len(ss))
	for i := len(ss) - 1; i >= 0; i-- {
		out = append(out, ss[i].ID)
	}
	return out
}
