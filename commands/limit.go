package commands

import (
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/acp/owner"
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

// limitLines are status's lines about a usage limit and its scheduled recover.
func limitLines(w io.Writer, s *state.Session) {
	l := s.Limit
	if l == nil {
		return
	}
	when := "the agent did not say when it resets"
	if l.ResetAt != nil {
		when = "resets at " + l.ResetAt.Local().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "limit     usage limit reached at %s; %s\n", l.ReachedAt.Local().Format(time.RFC3339), when)
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
