package owner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/schedule"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// submitSchedule and cancelSchedule talk to the OS scheduler; variables so
// that in-process tests need none.
var (
	submitSchedule = schedule.Submit
	cancelSchedule = schedule.Cancel
	settleSchedule = schedule.Settle
)

// limitReached ends the running turn on the agent's usage limit: the limit
// on the record (badge waiting-for-limit), a kandev recover handed to the
// operating system's scheduler for the reset time when resume_after_limit
// allows, and a usage_limit marker that says both.
func (o *owner) limitReached(a acp.UsageLimitAnswer) (string, error) {
	turn := o.currentTurn()
	if a.ResetAt == nil {
		a.ResetAt = o.windowReset() // the agent's last usage window report said when
	}
	lim := &state.UsageLimit{ReachedAt: o.now(), ResetAt: a.ResetAt, Said: history.Redact(a.Said), Turn: turn}
	o.update(func(s *state.Session) { s.Limit = lim })
	sched := o.scheduleAfterLimit(lim)
	summary := limitSummary(a)
	if sched != "" {
		summary += " " + sched
	}
	m := history.NewMarker(history.MarkerUsageLimit, summary, a.Said)
	m.TurnID = turn
	if a.ResetAt != nil {
		m.Data, _ = json.Marshal(map[string]string{"reset_at": eventlog.FormatTime(*a.ResetAt)})
	}
	o.append(true, &m)
	msg := "agent " + o.job.Profile.Name + " reached its usage limit"
	if a.ResetAt != nil {
		msg += "; it resets at " + a.ResetAt.Local().Format(time.RFC3339)
	}
	if sched != "" {
		msg += "; " + sched
	} else {
		msg += "; then: kandev recover " + o.s.ID + ` (or kandev prompt ` + o.s.ID + ` "...")`
	}
	return state.StopRateLimited, fmt.Errorf("%w: %s", acp.ErrRateLimited, msg)
}

// scheduleAfterLimit asks the scheduler for a kandev recover of the session
// at the limit's reset time when [session] resume_after_limit is on and the
// budget allows (verdict.ResumeAfterLimit); it says what it did ("" when the
// option is off).
func (o *owner) scheduleAfterLimit(lim *state.UsageLimit) string {
	cfg := o.job.Config
	if cfg == nil || !cfg.Session.ResumeAfterLimit {
		return ""
	}
	s := o.session()
	switch {
	case lim.ResetAt == nil:
		return "The agent did not say when it resets, so no kandev recover was scheduled."
	case !verdict.ResumeAfterLimit(true, lim, s.LimitResumes, cfg.MaxAttempts()):
		return fmt.Sprintf("No kandev recover was scheduled: %d automatic resumes after a usage limit ran in a row ([session.restart] max_attempts).", s.LimitResumes)
	}
	exe, err := os.Executable()
	if err != nil {
		return "kandev recover could not be scheduled: " + err.Error()
	}
	home := o.job.Home.Dir
	j := schedule.Job{
		Name: "kandev-recover-" + s.ID + "-" + strconv.FormatInt(lim.ResetAt.Unix(), 10),
		At:   *lim.ResetAt,
		Argv: []string{exe, "--home", home, "recover", s.ID},
		Env:  []string{"KANDEV_HOME=" + home},
	}
	// The intent is recorded before the scheduler is asked: a kill between
	// its answer and the record leaves a pending job that the next owner
	// or close finds by name (SettleSchedule), never one nobody knows of.
	setScheduled := func(sr *state.ScheduledRecover) {
		o.update(func(s *state.Session) {
			if s.Limit != nil {
				s.Limit.Scheduled = sr
			}
		})
	}
	setScheduled(&state.ScheduledRecover{At: j.At.UTC(), Name: j.Name, Pending: true})
	sr, err := submitSchedule(runtime.GOOS, j)
	if err != nil {
		setScheduled(nil)
		o.warn("could not schedule kandev recover " + s.ID + ": " + err.Error())
		return "kandev recover could not be scheduled (" + err.Error() + ")."
	}
	sr.Name = j.Name
	setScheduled(&sr)
	return fmt.Sprintf("kandev recover %s is scheduled for %s (%s %s).", s.ID, sr.At.Local().Format(time.RFC3339), sr.Via, sr.Handle)
}

// SettleSchedule records the kandev recover whose scheduling a killed
// process cut off (ScheduledRecover.Pending): the job a scheduler holds
// under its name, or none when no scheduler took it. The caller holds the
// session's owner lock or knows no owner runs. It returns the record's
// schedule as it is now.
func SettleSchedule(h *state.Home, id string) (*state.ScheduledRecover, error) {
	s, err := h.LoadSession(id)
	if err != nil || s.Limit == nil || s.Limit.Scheduled == nil || !s.Limit.Scheduled.Pending {
		if err != nil || s.Limit == nil {
			return nil, err
		}
		return s.Limit.Scheduled, nil
	}
	found := settleSchedule(runtime.GOOS, s.Limit.Scheduled)
	_, err = h.UpdateSession(id, func(s *state.Session) error {
		if s.Limit != nil && s.Limit.Scheduled != nil && s.Limit.Scheduled.Pending {
			s.Limit.Scheduled = found
		}
		return nil
	})
	return found, err
}

// continueAfterLimit is the turn kandev recover sends once the usage limit
// that stopped the session has reset: it asks the agent to carry on with the
// request the limit cut off (quoted, bounded like the resume context). Each
// counts against resume_after_limit's budget until a turn ends otherwise.
func (o *owner) continueAfterLimit(ctx context.Context) error {
	lim := o.s.Limit
	if !o.job.AfterLimit || lim == nil || !verdict.LimitLifted(lim, o.now()) {
		return nil
	}
	if lim.Held {
		// Nothing was cut off: the work held back is served next, as it was.
		o.dropLimit()
		return nil
	}
	if err := o.unattendedTurn(); err != nil { // window.go
		return err
	}
	request := ""
	if lim.Turn != "" {
		request = DescribeTurn(TurnEvents(o.job.Home.LogPath(o.s.ID), lim.Turn), lim.Turn).UserText
	}
	o.update(func(s *state.Session) { s.LimitResumes++ })
	return o.turn(ctx, eventlog.SourceContinuation, LimitContinuationPrompt(request, o.s.ID, o.job.Config.MaxReplayBytes()))
}

// LimitContinuationPrompt is the prompt that continues after a usage limit:
// it quotes the request the limit cut off, each line behind "> " (so no line
// reads as a new instruction), bounded by maxBytes.
func LimitContinuationPrompt(request, sessionID string, maxBytes int) string {
	const head = "The usage limit that stopped your previous turn has reset. Continue the task from where it stopped; check what was already done before repeating any action."
	request = strings.TrimSpace(request)
	if request == "" {
		return head
	}
	if maxBytes <= 0 {
		maxBytes = history.DefaultMaxReplayBytes
	}
	if room := maxBytes - len(head) - 200; len(request) > room && room > 0 {
		request = history.Clip(request, room) + "\n[truncated: kandev transcript " + sessionID + " shows the whole request]"
	}
	return head + "\n\nThe request the limit cut off was:\n\n> " + strings.ReplaceAll(request, "\n", "\n> ")
}

// maxAnswerHead is how much of a turn's answer answerLimit looks at.
const maxAnswerHead = 1024

// noteAnswer keeps the start of the current turn's agent message text.
func (o *owner) noteAnswer(turn string, evs []*eventlog.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.answerTurn != turn {
		o.answerTurn, o.answerHead = turn, ""
	}
	for _, e := range evs {
		if e.Type == eventlog.EventAgentMessage && len(o.answerHead) < maxAnswerHead {
			o.answerHead += e.Content
		}
	}
}

// limitInAnswer ends a turn the agent ended normally as rate limited when its
// whole answer is a usage limit error (RecognizeLimitAnswer).
func (o *owner) limitInAnswer(turnID, stop string) (string, error) {
	if stop != eventlog.StopEndTurn {
		return stop, nil
	}
	o.mu.Lock()
	head := ""
	if o.answerTurn == turnID {
		head = o.answerHead
	}
	o.mu.Unlock()
	if a, ok := acp.RecognizeLimitAnswer(head, o.now()); ok {
		return o.limitReached(a)
	}
	return stop, nil
}

// dropLimit forgets the usage limit when a turn starts: it is behind us,
// and the recover scheduled for it, if any, is cancelled (best effort) so
// that it cannot continue a later limit.
func (o *owner) dropLimit() {
	lim := o.s.Limit
	if lim == nil {
		return
	}
	if lim.Scheduled != nil {
		_ = cancelSchedule(*lim.Scheduled)
	}
	o.update(func(s *state.Session) { s.Limit = nil })
}

// limitSummary is the marker's summary for a usage limit.
func limitSummary(a acp.UsageLimitAnswer) string {
	if a.ResetAt == nil {
		return "The agent's usage limit was reached; it did not say when it resets. Send the next prompt once it has."
	}
	return fmt.Sprintf("The agent's usage limit was reached; it resets at %s.", a.ResetAt.Format(time.RFC3339))
}
