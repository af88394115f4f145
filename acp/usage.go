package acp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/state"
)

// costAdvice is what the operator does about a session that spent its max_cost.
const costAdvice = "raise [session] max_cost or start a new session"

// usageEvent turns a usage_update (the agent's context window and its
// cumulative cost) into a usage event; nil when it does not decode.
func usageEvent(raw string) *state.Event {
	var u sdk.SessionUsageUpdate
	if json.Unmarshal([]byte(raw), &u) != nil {
		return nil
	}
	used, size := int64(u.Used), int64(u.Size)
	e := &state.Event{Type: state.EventUsage, Used: &used, Size: &size}
	if u.Cost != nil {
		e.Cost = &state.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
	}
	return e
}

// promptUsageEvent is the usage event of a prompt response's token counts.
func promptUsageEvent(u *sdk.Usage) *state.Event {
	t := state.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), Total: int64(u.TotalTokens)}
	for _, f := range []struct {
		from *int
		to   *int64
	}{{u.CachedReadTokens, &t.CachedRead}, {u.CachedWriteTokens, &t.CachedWrite}, {u.ThoughtTokens, &t.Thought}} {
		if f.from != nil {
			*f.to = int64(*f.from)
		}
	}
	return &state.Event{Type: state.EventUsage, Tokens: &t}
}

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
