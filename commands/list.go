package commands

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kandev/kandev/state"
)

// ListCmd is kandev list.
type ListCmd struct {
	Resumable bool   `help:"Only sessions resume can act on now."`
	Workspace string `help:"Only this workspace." placeholder:"W"`
	State     string `help:"Only this state (e.g. WAITING_FOR_INPUT, RUNNING, COMPLETED)." placeholder:"S"`
	Limit     int    `help:"At most N sessions (0 = all)." default:"0" placeholder:"N"`
}

// Help shows an example.
func (c *ListCmd) Help() string { return "Example:\n  kandev list --resumable --limit 10" }

type listed struct {
	*state.Session
	Badge string `json:"badge"`
}

// Run lists sessions, newest activity first.
func (c *ListCmd) Run(env *Env) error {
	if c.Limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	want := strings.ToUpper(c.State)
	if want != "" && !validState(want) {
		return usagef("unknown --state %q: use CREATED, STARTING, RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED or CANCELLED", c.State)
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	all, skipped, err := h.ListSessionsReport()
	if err != nil {
		return err
	}
	if skipped.Newer > 0 { // the others stay usable: one warning, not a failed list
		fmt.Fprintf(env.Out.Err, "kandev: warning: %d session(s) not listed: written by a newer kandev (format %d); upgrade kandev\n", skipped.Newer, skipped.NewerFormat)
	}
	var picked []*state.Session
	for _, s := range all {
		if c.Workspace != "" && s.Workspace != c.Workspace || want != "" && s.State != want {
			continue
		}
		picked = append(picked, s)
	}
	out := []listed{}
	now := env.Now()
	// Probes are lock, lease and inbox reads: a batch at a time on every
	// core, so --limit stops after the batch that fills it.
	const batch = 512
	for lo := 0; lo < len(picked) && (c.Limit == 0 || len(out) < c.Limit); lo += batch {
		part := picked[lo:min(lo+batch, len(picked))]
		sts := make([]Status, len(part))
		state.ForEach(len(part), func(i int) {
			// Only a session whose record says a turn runs needs the probes: a
			// finished one is never resumable, and an idle one's badge (idle,
			// stopped, paused) and resumability do not depend on whether an
			// owner is alive. Most sessions of a long-lived home cost no probe.
			if needsProbe(part[i]) {
				sts[i] = observe(h, part[i], now)
			}
		})
		for i, s := range part {
			badge := sts[i].Badge
			switch {
			case state.IsTerminal(s.State):
				if c.Resumable {
					continue
				}
				badge = state.Badge(s, false)
			case !needsProbe(s):
				// Without a turn running, whether an owner is alive changes
				// neither the badge nor whether resume can act: the verdict
				// with a dead owner answers for both cases.
				badge = state.Badge(s, false)
				if v := state.Decide(s, state.Observation{Now: now}); c.Resumable && !(v.NeedsResume && v.IsResumable) {
					continue
				}
			case c.Resumable && !(sts[i].IsResumable && (sts[i].NeedsResume || sts[i].Reason == state.ReasonAgentRunning && sts[i].Attachable)):
				continue
			}
			out = append(out, listed{s, badge})
			if c.Limit > 0 && len(out) >= c.Limit {
				break
			}
		}
	}
	env.Out.Object(map[string]any{"sessions": out}, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, "no sessions (start one with: kandev start \"...\")")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tBADGE\tAGENT\tWORKSPACE\tACTIVITY\tTITLE")
		for _, s := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Badge, s.Agent, s.Workspace, ago(now, s.LastActivityAt), s.Title)
		}
		tw.Flush()
	})
	return nil
}

// needsProbe reports whether a session's badge and resumability depend on
// the owner-lock probe: only when its record says a turn is running.
func needsProbe(s *state.Session) bool {
	return s.State == state.StateRunning || s.State == state.StateStarting
}

func validState(s string) bool {
	switch s {
	case state.StateCreated, state.StateStarting, state.StateRunning, state.StateWaitingForInput,
		state.StateCompleted, state.StateFailed, state.StateCancelled:
		return true
	}
	return false
}

func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
