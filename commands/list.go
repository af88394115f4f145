package commands

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/internal/parallel"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// listCmd is kandev list.
type listCmd struct {
	Resumable bool   `help:"Only sessions resume can act on now."`
	Workspace string `help:"Only this workspace." placeholder:"W"`
	State     string `help:"Only this state (e.g. WAITING_FOR_INPUT, RUNNING, COMPLETED)." placeholder:"S"`
	Limit     int    `help:"At most N sessions (0 = all)." default:"0" placeholder:"N"`
}

// Help shows an example.
func (c *listCmd) Help() string { return "Example:\n  kandev list --resumable --limit 10" }

type listed struct {
	*state.Session
	Badge   string `json:"badge"`
	Problem string `json:"problem,omitempty"` // why the record could not be read (badge unknown)
	// WarmUntil is when the live owner that keeps the agent warm stops it:
	// the record's warm_until, shown only while that owner lives (a killed
	// owner's leftover is not).
	WarmUntil *time.Time `json:"warm_until,omitempty"`
	row       []string   // the text row, made on the core that probed the session
}

func (c *listCmd) readsOnly() bool { return true }

// Run lists sessions, newest activity first.
func (c *listCmd) Run(env *Env) error {
	if c.Limit < 0 {
		return usagef("--limit must be 0 or more (0: all; got %d)", c.Limit)
	}
	want := strings.ToUpper(c.State)
	if want != "" && !validState(want) {
		return usagef("unknown --state %q: use CREATED, STARTING, RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED or CANCELLED", c.State)
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	defer readingEverySession()()
	// Only the states the listing can show (records of others are read only
	// as far as their state).
	all, skipped, err := h.ListSessionsWhere(func(st string) bool {
		return (want == "" || st == want) && !(c.Resumable && state.IsTerminal(st))
	})
	if err != nil {
		return err
	}
	if skipped.Newer > 0 { // the others stay usable: one warning, not a failed list
		env.Out.Warn(fmt.Sprintf("%d session(s) not listed: written by a newer kandev (format %d); upgrade kandev", skipped.Newer, skipped.NewerFormat))
	}
	var picked []*state.Session
	for _, s := range all {
		if c.Workspace == "" || s.Workspace == c.Workspace {
			picked = append(picked, s)
		}
	}
	p, err := newProbe(env, "", false)
	if err != nil {
		return err
	}
	p.leases = skipped.Leases
	if p.leases == nil {
		p.leases = map[string]bool{} // the listing saw no lease at all
	}
	now := env.Now()
	out := c.assessed(env, h, p, picked, now)
	out = append(out, c.unreadable(skipped.Unreadable, len(out))...)
	out = append(out, c.remoteOnly(h, len(out))...)
	if n := len(skipped.Unreadable); n > 0 {
		env.Out.Warn(fmt.Sprintf("%d session record(s) could not be read; they are listed with badge unknown (kandev doctor checks each one)", n))
	}
	env.Out.Object(listOutput{Sessions: out}, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, c.noneMessage(len(all) > 0 || anyRecord(h)))
			return
		}
		writeListText(w, out, now)
	})
	return nil
}

// assessed is the picked sessions with their badges, as many as --limit
// asks for (and, with --resumable, only those resume can act on).
func (c *listCmd) assessed(env *Env, h *state.Home, p *probe, picked []*state.Session, now time.Time) []listed {
	out := make([]listed, 0, len(picked))
	// Probes are lock, lease and inbox reads: a batch at a time on every
	// core, so --limit stops after the batch that fills it; without a
	// limit, all in one batch.
	batch := len(picked)
	if c.Limit > 0 {
		batch = 512
	}
	for lo := 0; lo < len(picked) && (c.Limit == 0 || len(out) < c.Limit); lo += batch {
		part := picked[lo:min(lo+batch, len(picked))]
		as := make([]verdict.Assessment, len(part))
		level := probeBadge
		if c.Resumable {
			level = probeResumable
		}
		rows := make([][]string, len(part))
		parallel.ForEach(len(part), func(i int) {
			as[i] = p.assess(part[i], level)
			if !env.Out.JSON {
				rows[i] = listRow(part[i], badgeCell(as[i].Badge, warmUntil(h, part[i])), now)
			}
		})
		for i, s := range part {
			if c.Resumable && !as[i].Resumable {
				continue
			}
			out = append(out, listed{Session: s, Badge: as[i].Badge, WarmUntil: warmUntil(h, s), row: rows[i]})
			if c.Limit > 0 && len(out) >= c.Limit {
				break
			}
		}
	}
	return out
}

// noneMessage says why the listing is empty: no session at all (start
// one), or none that passed the filters (which ones).
func (c *listCmd) noneMessage(some bool) string {
	var filters []string
	if c.State != "" {
		filters = append(filters, "in state "+strings.ToUpper(c.State))
	}
	if c.Workspace != "" {
		filters = append(filters, fmt.Sprintf("in workspace %q", c.Workspace))
	}
	if c.Resumable {
		filters = append(filters, "that resume can act on now")
	}
	if len(filters) == 0 || !some {
		return "no sessions (start one with: kandev start \"...\")"
	}
	return "no session " + strings.Join(filters, " and ") + " (kandev list shows them all)"
}

// anyRecord reports whether the home holds any session record.
func anyRecord(h *state.Home) bool {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(h.RecordPath("x")), "*.json"))
	return len(m) > 0
}

// writeListText is the table of sessions; stored text is printed one line per cell.
func writeListText(w io.Writer, out []listed, now time.Time) {
	t := table{rows: make([][]string, 0, len(out)+1)}
	t.add("ID", "BADGE", "AGENT", "WORKSPACE", "ACTIVITY", "TITLE")
	for _, s := range out {
		switch {
		case s.Problem != "":
			t.add(s.ID, s.Badge, "-", "-", "-", "unreadable record: "+printableLine(s.Problem))
		case s.row != nil:
			t.add(s.row...)
		default:
			t.add(listRow(s.Session, s.Badge, now)...)
		}
	}
	t.write(w)
}

// warmUntil is the session's warm_until while its owner lives and no turn
// runs, else nil (an owner lock probed only for the few records that say warm).
func warmUntil(h *state.Home, s *state.Session) *time.Time {
	if s.WarmUntil == nil || turnOpen(s) {
		return nil
	}
	if alive, _ := h.OwnerAlive(s.ID); !alive {
		return nil
	}
	return s.WarmUntil
}

// turnOpen reports whether a turn runs (or starts): the warm_until recorded
// is then the last linger's, stale until the turn ends and sets a new one.
func turnOpen(s *state.Session) bool {
	return s.State == state.StateRunning || s.State == state.StateStarting
}

// badgeCell is the badge, with until when a warm owner keeps the agent: an
// idle session is warm; a stopped one (or one waiting for a limit) is not
// running anything though its agent still is, so the cell names the agent.
func badgeCell(badge string, until *time.Time) string {
	switch {
	case until == nil:
		return badge
	case badge == verdict.BadgeIdle:
		return badge + " (warm until " + until.Local().Format("15:04:05") + ")"
	}
	return badge + " (agent warm until " + until.Local().Format("15:04:05") + ")"
}

// listRow is the text row of a session.
func listRow(s *state.Session, badge string, now time.Time) []string {
	title := printableLine(s.Title)
	if s.Subagents > 0 {
		title += fmt.Sprintf(" [%d subagent(s)]", s.Subagents)
	}
	return []string{s.ID, badge, printableLine(s.Agent), printableLine(s.Workspace), ago(now, s.LastActivityAt), title}
}

// unreadable lists the records that exist but do not load, after the
// readable ones (their activity is unknown), while --limit leaves room. A
// filter on workspace, state or resumability cannot match what is unknown.
func (c *listCmd) unreadable(bad []state.UnreadableRecord, shown int) []listed {
	if c.Workspace != "" || c.State != "" || c.Resumable {
		return nil
	}
	var out []listed
	for _, r := range bad {
		if c.Limit > 0 && shown+len(out) >= c.Limit {
			break
		}
		out = append(out, listed{Session: &state.Session{ID: r.ID}, Badge: verdict.BadgeUnknown, Problem: r.Problem})
	}
	return out
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
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}

// readingEverySession is called by a command while it reads every session
// record; the func it returns undoes it. Nearly all such a command
// allocates stays live until it prints, so each collection the default
// pacing makes while the heap grows only marks the same records again:
// that was a fifth of the CPU time of list over 10,000 sessions. At 800,
// listing 10,000 sessions collects no garbage at all, for 5 MiB more peak
// memory than at the default (43 MiB instead of 38). A GOGC in the
// environment is left as it is.
func readingEverySession() (undo func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	before := debug.SetGCPercent(800)
	return func() { debug.SetGCPercent(before) }
}

// remoteOnly lists, with badge "remote", the sessions the last
// kandev pull --all --dry-run found only on the remote (kandev pull ID
// brings one here), while --limit leaves room.
func (c *listCmd) remoteOnly(h *state.Home, have int) []listed {
	if c.Resumable || c.State != "" {
		return nil
	}
	var out []listed
	for _, r := range remote.RemoteOnly(h) {
		if (c.Workspace != "" && r.Workspace != c.Workspace) || (c.Limit > 0 && have+len(out) >= c.Limit) {
			continue
		}
		s := &state.Session{ID: r.ID, Title: r.Title, Agent: r.Agent, Workspace: r.Workspace, State: r.State, LastActivityAt: r.LastActivityAt}
		out = append(out, listed{Session: s, Badge: "remote"})
	}
	return out
}
