package owner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/limits"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// noteWindows puts the newest usage window the agent reported on the
// record, and returns what says once, with a marker appended after the
// events, what in it made no sense (the limit event keeps the rest).
func (o *owner) noteWindows(evs []*eventlog.Event) (problem func()) {
	var w *state.RateWindow
	for _, e := range evs {
		if e.Type != eventlog.EventLimit {
			continue
		}
		var got state.RateWindow
		if json.Unmarshal(e.Data, &got) == nil {
			w = &got
		}
	}
	if w == nil {
		return func() {}
	}
	before := o.session().RateLimit
	o.update(func(s *state.Session) { s.RateLimit = w })
	return func() {
		if w.Problem != "" && (before == nil || before.Problem != w.Problem) {
			m := history.NewMarker(history.MarkerLimitData, "The agent's usage window report made no sense in part: "+w.Problem+"; kandev kept the rest.", "")
			m.TurnID = o.currentTurn()
			o.append(false, &m)
		}
	}
}

// windowReset is the reset time of the usage window the agent last
// reported, when it lies ahead: the reset of a usage limit whose answer
// did not say it.
func (o *owner) windowReset() *time.Time {
	w := o.session().RateLimit
	if w == nil || w.ResetsAt == nil || !w.ResetsAt.After(o.now()) {
		return nil
	}
	t := *w.ResetsAt
	return &t
}

// unattendedTurn is asked before each turn nobody follows (a kandev
// recover's continuation, a queued --no-follow prompt): the turn waits
// for the window's reset when the window is used at or above [limits]
// pause_at_percent (holdForLimit, exit 8), or for a person when what
// unattended work may do after a reset is spent (a pause, exit 5);
// otherwise it counts against that budget and goes.
func (o *owner) unattendedTurn() error {
	o.mu.Lock()
	person := o.wake.person
	o.mu.Unlock()
	if person {
		return nil // a person's prompt waits behind it: they took over
	}
	s := o.session()
	pauseAt := o.job.Config.PauseAtPercent()
	if limits.Decide(limits.GateInput{Window: s.RateLimit, PauseAt: pauseAt, Now: o.now()}) == limits.Wait {
		return o.holdForLimit(s.RateLimit, pauseAt)
	}
	if ar := s.AfterReset; ar != nil {
		var b limits.Budget
		if c := o.job.Config; c != nil {
			b = limits.Budget{Turns: c.Limits.AfterResetTurns, USD: c.Limits.AfterResetUSD}
		}
		if why := limits.Exhausted(ar, sessionCost(s), b); why != "" {
			return o.budgetSpent(why)
		}
		o.update(func(s *state.Session) {
			if s.AfterReset != nil {
				s.AfterReset.Turns++
			}
		})
	}
	o.mu.Lock()
	o.wake.turns++
	o.mu.Unlock()
	return nil
}

// unattendedFollowUp is unattendedTurn for the interrupted turn's
// follow-up, which only a kandev recover sends unattended.
func (o *owner) unattendedFollowUp() error {
	if !o.job.Unattended {
		return nil
	}
	return o.unattendedTurn()
}

// holdBeforeLaunch holds an unattended wake back before it launches the
// agent, when the only thing it came for (the interrupted turn's
// follow-up) would wait for the window's reset anyway.
func (o *owner) holdBeforeLaunch() error {
	if !o.job.Unattended || o.plan.FollowUp == FollowNothing {
		return nil
	}
	s := o.session()
	pauseAt := o.job.Config.PauseAtPercent()
	if limits.Decide(limits.GateInput{Window: s.RateLimit, PauseAt: pauseAt, Now: o.now()}) == limits.Wait {
		return o.holdForLimit(s.RateLimit, pauseAt)
	}
	return nil
}

// holdForLimit holds unattended work back before the agent's limit: the
// session waits for the window's reset as after a usage limit (badge
// waiting-for-limit, the scheduled kandev recover when resume_after_limit
// allows), though no turn was cut off.
func (o *owner) holdForLimit(w *state.RateWindow, pauseAt float64) error {
	reason := limits.HeldReason(w, pauseAt)
	lim := &state.UsageLimit{ReachedAt: o.now(), ResetAt: w.ResetsAt, Said: reason, Held: true}
	o.update(func(s *state.Session) { s.Limit = lim })
	sched := o.scheduleAfterLimit(lim)
	summary := "Unattended work waits for the agent's usage window to reset at " + w.ResetsAt.Format(time.RFC3339) + ": " + reason + "."
	if sched != "" {
		summary += " " + sched
	}
	m := history.NewMarker(history.MarkerUsageLimit, summary, "")
	m.Data, _ = json.Marshal(map[string]any{"reset_at": eventlog.FormatTime(*w.ResetsAt), "held": true})
	o.append(true, &m)
	o.mu.Lock()
	o.wake.held = true
	o.mu.Unlock()
	msg := "session " + o.s.ID + ": " + reason + "; it waits for the reset at " + w.ResetsAt.Local().Format(time.RFC3339)
	if sched != "" {
		msg += "; " + sched
	} else {
		msg += "; then: kandev recover " + o.s.ID + " (or a prompt of yours goes now)"
	}
	return fmt.Errorf("%w: %s", acp.ErrRateLimited, msg)
}

// budgetSpent pauses unattended continuation for a person once what it
// may do after a reset is spent.
func (o *owner) budgetSpent(why string) error {
	o.update(func(s *state.Session) {
		if s.AfterReset != nil {
			s.AfterReset.Exhausted = why
		}
	})
	turn, _ := o.session().AwaitingContinuation()
	o.pause(state.Pause{Kind: state.PauseAfterReset, Reason: why, Turn: turn}, "a prompt of yours carries on (kandev recap "+o.s.ID+" shows where it stands)")
	o.mu.Lock()
	o.wake.paused = why
	o.mu.Unlock()
	return &NotResumableError{SessionID: o.s.ID, Reason: "unattended continuation of session " + o.s.ID + " waits for a person: " + why,
		Advice: `kandev prompt ` + o.s.ID + ` "..."`}
}

// startAfterReset begins the count of what unattended work does after
// the reset of lim, unless a wake after the same reset began it already.
func (o *owner) startAfterReset(lim *state.UsageLimit) {
	if lim == nil || lim.ResetAt == nil {
		return
	}
	s := o.session()
	if s.AfterReset != nil && s.AfterReset.Since.Equal(lim.ResetAt.UTC()) {
		return
	}
	ar := limits.StartAfterReset(*lim.ResetAt, sessionCost(s))
	o.update(func(s *state.Session) { s.AfterReset = ar })
}

// beginWake notes, for an unattended wake, the cost so far (its report
// says what it spent) and, when it comes after a reset, starts the
// after-reset count.
func (o *owner) beginWake() {
	if !o.job.Unattended {
		return
	}
	o.mu.Lock()
	o.wake.costFrom = sessionCost(o.s)
	o.mu.Unlock()
	if lim := o.s.Limit; o.job.AfterLimit && verdict.LimitLifted(lim, o.now()) {
		o.startAfterReset(lim)
	}
}

// personHere ends the after-reset count when a person's own prompt is
// among what this owner serves: what they send goes, and the unattended
// work queued before it with it (the person took over).
func (o *owner) personHere() {
	o.mu.Lock()
	o.wake.person = true
	o.mu.Unlock()
	if o.s.AfterReset == nil {
		return
	}
	o.update(func(s *state.Session) {
		s.AfterReset = nil
		if s.Pause != nil && s.Pause.Kind == state.PauseAfterReset {
			s.Pause = nil
		}
	})
}

// wakeState is what this owner's unattended wake did, for its report.
type wakeState struct {
	turns    int
	costFrom float64
	held     bool
	paused   string
	// person: a person's own prompt is among what this owner serves; the
	// queued work before it goes with it.
	person bool
}

// reportWake logs, for a kandev recover that ran or held anything, what
// it did ("resumed N turns, spent X"): a wake_report marker, which the
// notify hook receives, and the record's last_wake, which status shows.
func (o *owner) reportWake() {
	if !o.job.Unattended {
		return
	}
	o.mu.Lock()
	w := o.wake
	o.mu.Unlock()
	if w.turns == 0 && !w.held && w.paused == "" {
		return
	}
	s := o.session()
	spent := sessionCost(s) - w.costFrom
	currency := ""
	if s.Usage != nil && s.Usage.Cost != nil {
		currency = s.Usage.Cost.Currency
	}
	summary := limits.WakeSummary(w.turns, spent, currency)
	switch {
	case w.paused != "":
		summary += "; then paused for a person: " + w.paused
	case w.held:
		summary += "; then held back before the agent's limit"
	}
	rep := &state.WakeReport{At: o.now(), Turns: w.turns, Spent: spent, Summary: summary}
	o.update(func(s *state.Session) { s.LastWake = rep })
	m := history.NewMarker(history.MarkerWakeReport, "kandev recover "+summary+".", "")
	o.append(true, &m)
}

// sessionCost is the session's total cost so far (0 when none reported).
func sessionCost(s *state.Session) float64 {
	if s.Usage == nil || s.Usage.Cost == nil {
		return 0
	}
	return s.Usage.Cost.Amount
}
