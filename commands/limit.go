package commands

import (
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/limits"
	"github.com/kandev/kandev/schedule"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// limitDue reports a session whose usage limit has reset and that no owner
// runs: kandev recover continues it.
func limitDue(s *state.Session, a verdict.Assessment, now time.Time) bool {
	return s.Limit != nil && verdict.LimitLifted(s.Limit, now) && !state.IsTerminal(s.State) &&
		a.Reason != verdict.ReasonAgentRunning && a.Pause() == nil && a.IsResumable
}

// limitWaits reports a session whose unattended work was held back before
// the agent's limit that has not reset yet: recover leaves it (exit 8).
func limitWaits(s *state.Session, now time.Time) (recoverOutcome, bool) {
	l := s.Limit
	if l == nil || !l.Held || verdict.LimitLifted(l, now) || l.ResetAt == nil {
		return recoverOutcome{}, false
	}
	return recoverOutcome{ID: s.ID, Outcome: "waits for the usage limit", Error: "(resets at " + l.ResetAt.Local().Format(time.RFC3339) + ")"}, true
}

// warnNearLimit prints one warning line when a person's own prompt starts
// with the agent's usage window at or above [limits] pause_at_percent: it
// still goes (only unattended work waits, limits.Decide).
func warnNearLimit(env *Env, job owner.Job) {
	s := job.Record
	if s == nil {
		var err error
		if s, err = job.Home.LoadSession(job.SessionID); err != nil {
			return
		}
	}
	pauseAt := job.Config.PauseAtPercent()
	if limits.Decide(limits.GateInput{Window: s.RateLimit, PauseAt: pauseAt, Attended: true, Now: env.Now()}) == limits.Warn {
		env.Out.Warn(limits.WarnLine(s.RateLimit, pauseAt))
	}
}

// heldUntil is the reset time, as text, of a session whose unattended work
// waits for the agent's usage window ("" when it does not).
func heldUntil(h *state.Home, id string, now time.Time) string {
	s, err := h.LoadSession(id)
	if err != nil || s.Limit == nil || !s.Limit.Held || s.Limit.ResetAt == nil || verdict.LimitLifted(s.Limit, now) {
		return ""
	}
	return s.Limit.ResetAt.Local().Format(time.RFC3339)
}

// limitLines are status's lines about a usage limit and its scheduled recover.
func limitLines(w io.Writer, s *state.Session, now time.Time) {
	if rl := s.RateLimit; rl != nil {
		line := limits.Describe(rl)
		if rl.ResetsAt != nil && !now.Before(*rl.ResetsAt) {
			line += " (passed: the agent's next report says where the new window stands)"
		}
		fmt.Fprintf(w, "window    %s\n", printableLine(line))
	}
	if ar := s.AfterReset; ar != nil {
		line := fmt.Sprintf("after reset %d unattended turn(s) since %s", ar.Turns, ar.Since.Local().Format(time.RFC3339))
		if ar.Exhausted != "" {
			line += "; waits for a person: " + ar.Exhausted
		}
		fmt.Fprintln(w, line)
	}
	if wk := s.LastWake; wk != nil {
		fmt.Fprintf(w, "last wake %s: %s\n", wk.At.Local().Format(time.RFC3339), wk.Summary)
	}
	l := s.Limit
	if l == nil {
		return
	}
	if l.Held {
		fmt.Fprintf(w, "limit     %s; waits for the reset at %s\n", printableLine(l.Said), l.ResetAt.Local().Format(time.RFC3339))
		scheduledLine(w, s)
		return
	}
	when := "the agent did not say when it resets"
	if l.ResetAt != nil {
		when = "resets at " + l.ResetAt.Local().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "limit     usage limit reached at %s; %s\n", l.ReachedAt.Local().Format(time.RFC3339), when)
	scheduledLine(w, s)
}

// scheduledLine is status's line about the kandev recover scheduled for
// the session's usage limit, if any.
func scheduledLine(w io.Writer, s *state.Session) {
	l := s.Limit
	if sc := l.Scheduled; sc != nil && sc.Pending {
		fmt.Fprintf(w, "scheduled kandev recover %s at %s was cut off while the scheduler was asked; the next prompt, resume or close finds and records it (or finds none)\n", s.ID, sc.At.Local().Format(time.RFC3339))
	} else if sc != nil {
		fmt.Fprintf(w, "scheduled kandev recover %s at %s (%s %s; kandev close %s cancels it)\n", s.ID, sc.At.Local().Format(time.RFC3339), sc.Via, sc.Handle, s.ID)
	}
}

// cancelLimitSchedule cancels the kandev recover scheduled for the session's
// usage limit, if any, and forgets it.
func cancelLimitSchedule(h *state.Home, id string) (bool, error) {
	found, err := owner.SettleSchedule(h, id) // one whose scheduling a kill cut off is found first
	if err != nil || found == nil {
		return false, nil
	}
	sc := *found
	if err := schedule.Cancel(sc); err != nil {
		return false, fmt.Errorf("could not cancel the scheduled kandev recover (%s %s): %w", sc.Via, sc.Handle, err)
	}
	_, err = h.UpdateSession(id, func(s *state.Session) error {
		if s.Limit != nil {
			s.Limit.Scheduled = nil
		}
		return nil
	})
	return true, err
}
