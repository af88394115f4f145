package owner

import (
	"fmt"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// costAdvice is what the operator does about a session that spent its max_cost.
const costAdvice = "raise [session] max_cost or start a new session"

// appendUpdates appends a batch of the agent's updates. Usage events in it
// get the session's running cost; the record's totals follow the log (the
// log is the truth, the record its summary) with the next record write: the
// turn's end, which usually comes a moment after the agent's last report, or
// usageFlushDelay later, whichever is first. So a usage report costs no write
// of its own, and the fsync of turn_ended makes it durable with the turn.
func (o *owner) appendUpdates(evs []*eventlog.Event) {
	var usage []*eventlog.Event
	for _, e := range evs {
		if e.Type == eventlog.EventUsage {
			usage = append(usage, e)
		}
	}
	if len(usage) == 0 {
		o.append(false, evs...)
		return
	}
	o.recMu.Lock()
	base := o.s
	if o.pendingUsage != nil {
		base = o.pendingUsage
	}
	next := &state.Session{Usage: cloneOf(base.Usage), UsageCount: cloneOf(base.UsageCount)}
	token := o.s.ResumeToken
	o.recMu.Unlock()
	for _, e := range usage {
		next.AccountUsage(e, token)
	}
	o.append(false, evs...)
	if o.storageErr() != nil {
		return
	}
	o.recMu.Lock()
	defer o.recMu.Unlock()
	o.pendingUsage = next
	if o.usageFlush == nil && !o.usageFlushOff {
		o.usageFlush = time.AfterFunc(usageFlushDelay, o.flushUsage)
	}
}

// usageFlushDelay bounds how long the record's usage totals lag behind the
// log while a turn runs on.
const usageFlushDelay = 100 * time.Millisecond

// flushUsage writes the pending usage totals (usageFlush's timer). A timer
// that fired as settleUsage stopped it writes nothing: the owner's end has
// written them, and no record write may follow it.
func (o *owner) flushUsage() {
	o.recMu.Lock()
	defer o.recMu.Unlock()
	if o.usageFlushOff || o.pendingUsage == nil {
		return
	}
	o.updateLocked(func(*state.Session) {})
}

// withPendingUsage is fn after the usage totals not yet in the record; the
// caller holds recMu.
func (o *owner) withPendingUsage(fn func(*state.Session)) func(*state.Session) {
	p := o.pendingUsage
	if p == nil {
		return fn
	}
	return func(s *state.Session) {
		s.Usage, s.UsageCount = cloneOf(p.Usage), cloneOf(p.UsageCount)
		fn(s)
	}
}

// settleUsage writes the usage totals still pending and stops the timer: no
// record write may follow the owner's end.
func (o *owner) settleUsage() {
	o.recMu.Lock()
	o.usageFlushOff = true
	if o.usageFlush != nil {
		o.usageFlush.Stop()
	}
	pending := o.pendingUsage != nil
	o.recMu.Unlock()
	if pending {
		o.update(func(*state.Session) {})
	}
}

func cloneOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// costCapped refuses a prompt to a session that has spent its max_cost.
func costCapped(job Job) error {
	if job.Prompt == "" || job.Config == nil || job.Config.Session.MaxCost <= 0 {
		return nil
	}
	s, err := job.Home.LoadSession(job.SessionID)
	if err != nil {
		return nil // the owner reports it
	}
	if msg, ok := verdict.CostCapReached(s.Usage, job.Config.Session.MaxCost); ok {
		return fmt.Errorf("%w: %s; %s", ErrNotResumable, msg, costAdvice)
	}
	return nil
}
