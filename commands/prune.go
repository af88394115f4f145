package commands

import (
	"context"

	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/prune"
	"github.com/kandev/kandev/state"
)

// pruneCmd is kandev prune: it deletes the files of finished sessions.
type pruneCmd struct {
	OlderThan string `help:"Only sessions with no activity for DUR (e.g. 720h, 30d, 1d12h)." placeholder:"DUR"`
	State     string `help:"Only this terminal state: COMPLETED, FAILED or CANCELLED." placeholder:"S"`
	DryRun    bool   `help:"List what would be deleted; delete nothing."`
}

// Help shows an example.
func (c *pruneCmd) Help() string {
	return "Example:\n  kandev prune --older-than 30d --dry-run\n\n" +
		"Only COMPLETED, FAILED and CANCELLED sessions are pruned, never one that a\n" +
		"live process owns, that another holder's live lease is on, or that a session\n" +
		"started from it (start --parent) still reads."
}

var terminalStates = []string{state.StateCompleted, state.StateFailed, state.StateCancelled}

// Run deletes (or, with --dry-run, lists) the matching finished sessions.
func (c *pruneCmd) Run(env *Env) error {
	age, err := parseAge("--older-than", c.OlderThan)
	if err != nil {
		return err
	}
	want, err := pruneState(c.State)
	if err != nil {
		return err
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	all, err := h.ListSessions()
	if err != nil {
		return err
	}
	now := env.Now()
	tempFiles, forkLogs, err := pruneLeftovers(h, now, c.DryRun)
	if err != nil {
		return err
	}
	facts := prune.Facts{Sessions: all, Now: now, Filter: prune.Filter{OlderThan: age, State: want}, Kept: map[string]string{}}
	res, err := c.carryOut(h, facts)
	if err != nil {
		return err
	}
	res.tempFiles, res.forkLogs = tempFiles, forkLogs
	// The agents' own copies go last, once kandev's files are gone.
	plans := agentDeletes(h, all, res.pruned)
	if c.DryRun {
		for _, d := range plans {
			for _, id := range d.ids {
				res.agentDeleted[id] = d.agent
			}
		}
	} else {
		var warnings []string
		res.agentDeleted, warnings = deleteAgentSessions(env, h, plans)
		for _, w := range warnings {
			env.Out.Warn(w)
		}
	}
	containers := []string{}
	if !c.DryRun {
		containers = pruneContainers(env, h, all, res.pruned)
	}
	agentSessions := []string{}
	for _, id := range res.pruned {
		if res.agentDeleted[id] != "" {
			agentSessions = append(agentSessions, id)
		}
	}
	env.Out.Object(pruneOutput{Pruned: res.pruned, DryRun: c.DryRun, TempFiles: tempFiles, ForkLogs: forkLogs, WorktreesRemoved: res.removed, AgentSessionsDeleted: agentSessions, ContainersRemoved: containers},
		func(w io.Writer) { res.writeText(w, all) })
	return nil
}

// carryOut deletes (or, dry run, checks) the sessions of the plan in its
// order. A session a check keeps goes into the facts and the rest is
// planned again, so that what waited for it (its parent, a worktree it
// shares) stays too.
func (c *pruneCmd) carryOut(h *state.Home, facts prune.Facts) (*pruneResult, error) {
	res := &pruneResult{pruned: []string{}, worktrees: map[string]string{}, shared: map[string]string{},
		removed: []string{}, dryRun: c.DryRun, agentDeleted: map[string]string{}}
	holder := state.DefaultHolder()
	for {
		plan := prune.NewPlan(facts)
		gone := map[string]bool{}
		blocked := false
		for _, step := range plan.Delete {
			why, err := c.deleteOne(h, step, holder, facts.Now)
			if err != nil {
				return nil, err
			}
			if why != "" {
				facts.Kept[step.Session.ID] = why
				blocked = true
				break
			}
			gone[step.Session.ID] = true
			res.record(step)
		}
		if !blocked {
			res.kept = plan.Kept
			return res, nil
		}
		facts.Sessions = slices.DeleteFunc(slices.Clone(facts.Sessions), func(s *state.Session) bool { return gone[s.ID] })
	}
}

// deleteOne deletes one session of the plan under its locks, or, dry run,
// checks it without them; it returns why the session stays instead.
func (c *pruneCmd) deleteOne(h *state.Home, step prune.Step, holder string, now time.Time) (string, error) {
	if c.DryRun {
		return pruneBlocker(h, step.Session, holder, step.Sharer == "", now), nil
	}
	return pruneSession(h, step.Session.ID, holder, step.Sharer == "", now)
}

func pruneState(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	want := strings.ToUpper(s)
	switch want {
	case "DONE":
		want = state.StateCompleted
	case "ARCHIVED":
		want = state.StateCancelled
	}
	for _, t := range terminalStates {
		if want == t {
			return want, nil
		}
	}
	return "", usagef("--state %q: prune only removes finished sessions; use COMPLETED, FAILED or CANCELLED", s)
}

// parseAge reads a duration that may start with days ("30d", "1d12h"), since
// time.ParseDuration stops at hours.
func parseAge(flag, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	bad := usagef("%s %q: use a duration like 720h, 30d or 1d12h", flag, s)
	var days time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 {
			return 0, bad
		}
		days = time.Duration(n * float64(24*time.Hour))
		rest = s[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, bad
		}
	}
	return days + d, nil
}

// pruneResult is what prune did (or would do), for its text output.
type pruneResult struct {
	pruned    []string
	kept      map[string]string // id -> why it was kept
	worktrees map[string]string // id -> its removed worktree, described
	shared    map[string]string // id -> its worktree that stays for another session
	removed   []string          // the worktrees kandev made for pruned sessions
	tempFiles []string
	forkLogs  []string
	dryRun    bool
	// agentDeleted: id -> the agent that deleted (or, dry run, would be
	// asked to delete) its own copy of the session (session/delete).
	agentDeleted map[string]string
}

// record notes a deleted session and what became of its worktree.
func (r *pruneResult) record(step prune.Step) {
	s := step.Session
	r.pruned = append(r.pruned, s.ID)
	wt := s.Worktree
	if wt == nil || !wt.Owned || wt.Path == "" {
		return
	}
	if step.Sharer != "" {
		r.shared[s.ID] = wt.Path + " stays: session " + step.Sharer + " works in it too"
		return
	}
	r.worktrees[s.ID] = wt.Path + " (branch " + wt.Branch + " kept)"
	r.removed = append(r.removed, wt.Path)
}

func (r *pruneResult) writeText(w io.Writer, all []*state.Session) {
	verb := "pruned"
	if r.dryRun {
		verb = "would prune"
	}
	for _, p := range r.tempFiles {
		fmt.Fprintf(w, "%s leftover temp file %s\n", verb, p)
	}
	for _, p := range r.forkLogs {
		fmt.Fprintf(w, "%s leftover log of a fork killed before its record was written %s\n", verb, p)
	}
	for _, id := range r.pruned {
		fmt.Fprintf(w, "%s %s\n", verb, id)
		if wt, ok := r.worktrees[id]; ok {
			fmt.Fprintf(w, "  and its worktree %s\n", wt)
		}
		if wt, ok := r.shared[id]; ok {
			fmt.Fprintf(w, "  its worktree %s\n", wt)
		}
		if a := r.agentDeleted[id]; a != "" && r.dryRun {
			fmt.Fprintf(w, "  and %s would be asked to delete its copy (session/delete)\n", a)
		} else if a != "" {
			fmt.Fprintf(w, "  and %s deleted its copy (session/delete)\n", a)
		}
	}
	for _, s := range all {
		if why, ok := r.kept[s.ID]; ok {
			fmt.Fprintf(w, "kept %s: %s\n", s.ID, why)
		}
	}
	switch {
	case len(r.pruned) == 0:
		fmt.Fprintln(w, "nothing to prune (only COMPLETED, FAILED and CANCELLED sessions are pruned)")
	case r.dryRun:
		fmt.Fprintf(w, "%d session(s) would be pruned; run again without --dry-run to delete them\n", len(r.pruned))
	default:
		fmt.Fprintf(w, "%d session(s) pruned\n", len(r.pruned))
	}
}

// pruneContainers removes the containers of the pruned sessions that ran
// their agent in one (docs/containers.md); an engine that fails is a
// warning: the sessions are gone, and kandev doctor lists what is left.
func pruneContainers(env *Env, h *state.Home, all []*state.Session, pruned []string) []string {
	gone := map[string]bool{}
	for _, id := range pruned {
		gone[id] = true
	}
	var ids []string
	for _, s := range all {
		if gone[s.ID] && s.Runtime == config.RuntimeContainer {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return []string{}
	}
	cfg, err := env.Config()
	if err != nil {
		env.Out.Warn(err.Error())
		return []string{}
	}
	removed, err := container.RemoveSessions(context.Background(), cfg.Runtime, h.Dir, ids)
	if err != nil {
		env.Out.Warn("the containers of pruned sessions were not all removed: " + err.Error())
	}
	if removed == nil {
		removed = []string{}
	}
	return removed
}
