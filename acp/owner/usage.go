package owner

import (
	"fmt"

	"github.com/kandev/kandev/state"
)

// costAdvice is what the operator does about a session that spent its max_cost.
const costAdvice = "raise [session] max_cost or start a new session"

// appendUpdates appends a batch of the agent's updates. Usage events in it
// get the session's running cost, and the record's totals follow once the
// batch is in the log: the log is the truth, the record its summary.
func (o *owner) appendUpdates(evs []*state.Event) {
	var usage []*state.Event
	for _, e := range evs {
		if e.Type == state.EventUsage {
			usage = append(usage, e)
		}
	}
	if len(usage) == 0 {
		o.append(false, evs...)
		return
	}
	next := state.Session{Usage: cloneOf(o.s.Usage), UsageCount: cloneOf(o.s.UsageCount)}
	for _, e := range usage {
		next.AccountUsage(e, o.s.ResumeToken)
	}
	o.append(true, evs...)
	if o.storageErr() != nil {
		return
	}
	o.update(func(s *state.Session) { s.Usage, s.UsageCount = next.Usage, next.UsageCount })
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
	if msg, ok := state.CostCapReached(s.Usage, job.Config.Session.MaxCost); ok {
		return fmt.Errorf("%w: %s; %s", ErrNotResumable, msg, costAdvice)
	}
	return nil
}
