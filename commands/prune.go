package commands

import (
	"context"

	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
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
	holder := state.DefaultHolder()
	pruned := []string{}
	kept := map[string]string{} // id -> why it was kept
	worktrees := map[string]string{}
	shared := map[string]string{} // id -> its worktree, kept for another session
	removed := []string{}         // the worktrees kandev made for pruned sessions
	var pending []*state.Session
	for _, s := range all {
		if !state.IsTerminal(s.State) || want != "" && s.State != want {
			continue
		}
		if age > 0 && now.Sub(s.LastActivityAt) < age {
			continue
		}
		pending = append(pending, s)
	}
	// A parent goes only after every session started from it (start
	// --parent) went: their resume context reads its log. Passes repeat
	// while they prune something, so a chain goes child first.
	followUps := followUpsOf(all)
	gone := map[string]bool{}
	for progress := true; progress; {
		progress = false
		var waiting []*state.Session
		for _, s := range pending {
			if parentKept(s.ID, followUps, gone) != "" {
				waiting = append(waiting, s)
				continue
			}
			progress = true
			sharer := worktreeSharer(s, all, gone)
			var why string
			if c.DryRun {
				why = pruneBlocker(h, s, holder, sharer == "", now)
			} else {
				why, err = pruneSession(h, s.ID, holder, sharer == "", now)
				if err != nil {
					return err
				}
			}
			if why != "" {
				kept[s.ID] = why
				continue
			}
			gone[s.ID] = true
			pruned = append(pruned, s.ID)
			if wt := s.Worktree; wt != nil && wt.Owned && wt.Path != "" {
				if sharer != "" {
					shared[s.ID] = wt.Path + " stays: session " + sharer + " works in it too"
					continue
				}
				worktrees[s.ID] = wt.Path + " (branch " + wt.Branch + " kept)"
				removed = append(removed, wt.Path)
			}
		}
		pending = waiting
	}
	for _, s := range pending {
		kept[s.ID] = parentKept(s.ID, followUps, gone)
	}
	// The agents' own copies go last, once kandev's files are gone.
	plans := agentDeletes(h, all, pruned)
	agentDeleted := map[string]string{}
	if c.DryRun {
		for _, d := range plans {
			for _, id := range d.ids {
				agentDeleted[id] = d.agent
			}
		}
	} else {
		var warnings []string
		agentDeleted, warnings = deleteAgentSessions(env, h, plans)
		for _, w := range warnings {
			env.Out.Warn(w)
		}
	}
	containers := []string{}
	if !c.DryRun {
		containers = pruneContainers(env, h, all, pruned)
	}
	agentSessions := []string{}
	for _, id := range pruned {
		if agentDeleted[id] != "" {
			agentSessions = append(agentSessions, id)
		}
	}
	res := pruneResult{pruned: pruned, kept: kept, worktrees: worktrees, shared: shared, tempFiles: tempFiles, forkLogs: forkLogs, dryRun: c.DryRun, agentDeleted: agentDeleted}
	env.Out.Object(pruneOutput{Pruned: pruned, DryRun: c.DryRun, TempFiles: tempFiles, ForkLogs: forkLogs, WorktreesRemoved: removed, AgentSessionsDeleted: agentSessions, ContainersRemoved: containers},
		func(w io.Writer) { res.writeText(w, all) })
	return nil
}

// worktreeSharer is another session, not pruned, that records the same
// worktree as s (a fork made without --worktree, a session started inside
// it), or "": a worktree goes only with the last session that works in it.
func worktreeSharer(s *state.Session, all []*state.Session, gone map[string]bool) string {
	if s.Worktree == nil || s.Worktree.Path == "" {
		return ""
	}
	for _, o := range all {
		if o.ID != s.ID && !gone[o.ID] && o.Worktree != nil && filepath.Clean(o.Worktree.Path) == filepath.Clean(s.Worktree.Path) {
			return o.ID
		}
	}
	return ""
}

// followUpsOf maps each session id to the sessions started from it with
// start --parent, in order. Forks are not among them: a fork's log holds
// its own copy of the conversation.
func followUpsOf(all []*state.Session) map[string][]string {
	out := map[string][]string{}
	for _, s := range all {
		if s.ParentID != "" && s.ForkedAt == 0 {
			out[s.ParentID] = append(out[s.ParentID], s.ID)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// parentKept says why session id must stay while a session started from
// it (followUps) is not gone, or "" when none needs it.
func parentKept(id string, followUps map[string][]string, gone map[string]bool) string {
	for _, child := range followUps[id] {
		if !gone[child] {
			return "session " + child + " was started from it (kandev start --parent) and reads its history; prune " + child + " first"
		}
	}
	return ""
}

// pruneLeftovers deletes (or lists) the files that processes killed
// mid-write left behind and that belong to no session: the temp files of
// atomic writes, and the log of a fork killed before its record was
// written (forkLeftover). The log an import left stays: importing the same
// bundle again finishes it.
func pruneLeftovers(h *state.Home, now time.Time, dryRun bool) (temps, forkLogs []string, err error) {
	left, err := h.Leftovers(now)
	if err != nil {
		return nil, nil, err
	}
	temps, forkLogs = []string{}, []string{}
	for _, l := range left {
		switch {
		case l.Kind == "temp":
			temps = append(temps, l.Path)
			if !dryRun {
				if err := os.Remove(l.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, nil, fmt.Errorf("prune: %w", err)
				}
			}
		case forkLeftover(h, l):
			if !dryRun {
				removed, err := removeForkLeftover(h, l)
				if err != nil {
					return nil, nil, err
				}
				if !removed {
					continue
				}
			}
			forkLogs = append(forkLogs, l.Path)
		}
	}
	return temps, forkLogs, nil
}

// forkLeftover reports whether l is the log of a fork killed between
// writing its log and its record: a log with no record whose last event is
// the fork's own marker (a fork writes that marker last and nothing more
// before its record), and whose owner lock no process holds (a fork holds
// it from its log to its record, so one under way is never taken for one).
func forkLeftover(h *state.Home, l state.Leftover) bool {
	if l.Kind != "log" {
		return false
	}
	st, err := os.Lstat(l.Path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	last, _, err := eventlog.LastEvent(l.Path)
	if err != nil || last.Type != eventlog.EventMarker || last.Kind != string(history.MarkerSessionForked) {
		return false
	}
	alive, err := h.OwnerAlive(strings.TrimSuffix(filepath.Base(l.Path), ".jsonl"))
	return err == nil && !alive
}

// removeForkLeftover deletes a fork's leftover log and its lock files under
// the session's owner lock, once it is sure no record appeared meanwhile.
func removeForkLeftover(h *state.Home, l state.Leftover) (bool, error) {
	id := strings.TrimSuffix(filepath.Base(l.Path), ".jsonl")
	lock, err := h.AcquireOwner(id)
	if errors.Is(err, state.ErrOwnerBusy) {
		return false, nil // a fork under way after all
	}
	if err != nil {
		return false, err
	}
	defer lock.Release()
	if _, err := os.Lstat(h.RecordPath(id)); !errors.Is(err, os.ErrNotExist) {
		return false, nil // its record is there now: a session, not a leftover
	}
	if err := h.DeleteSessionFiles(id); err != nil {
		return false, fmt.Errorf("prune: %w (fix the permissions, then run kandev prune again)", err)
	}
	return true, nil
}

// pruneSession deletes a finished session's files and the demo agent's file
// for it, holding the owner and record locks so that no kandev process can
// take the session over meanwhile. It returns why a session was kept instead.
func pruneSession(h *state.Home, id, holder string, withWorktree bool, now time.Time) (kept string, err error) {
	owner, err := h.AcquireOwner(id)
	if errors.Is(err, state.ErrOwnerBusy) {
		return "a live kandev process owns it", nil
	}
	if err != nil {
		return "", err
	}
	defer owner.Release()
	unlock, err := h.LockRecord(id)
	if err != nil {
		return "", err
	}
	defer unlock()
	s, err := h.LoadSession(id)
	if errors.Is(err, state.ErrNotFound) {
		return "already gone", nil
	}
	if err != nil {
		return "", err
	}
	if !state.IsTerminal(s.State) {
		return "it is " + s.State + " again", nil
	}
	if why := leaseBlocker(h, id, holder, now); why != "" {
		return why, nil
	}
	if withWorktree {
		if why, err := removeOwnedWorktree(s.Worktree, false); why != "" || err != nil {
			return why, err
		}
	}
	// An agent that offers session/delete deletes its own copy after this
	// (prune_agents.go); the demo agent's file goes here otherwise.
	if p := demoAgentFile(h, s.ResumeToken); p != "" && !acp.DeleteAdvertised(s.Capabilities) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("prune %s: %w", id, err)
		}
	}
	if err := h.DeleteSessionFiles(id); err != nil {
		return "", fmt.Errorf("prune %s: %w (fix the permissions, then run kandev prune again)", id, err)
	}
	return "", nil
}

// pruneBlocker says why a session would be kept, without taking its locks.
func pruneBlocker(h *state.Home, s *state.Session, holder string, withWorktree bool, now time.Time) string {
	if alive, _ := h.OwnerAlive(s.ID); alive {
		return "a live kandev process owns it"
	}
	if why := leaseBlocker(h, s.ID, holder, now); why != "" {
		return why
	}
	if !withWorktree {
		return ""
	}
	why, err := removeOwnedWorktree(s.Worktree, true)
	if err != nil {
		return err.Error()
	}
	return why
}

// removeOwnedWorktree removes the worktree kandev made for a session (a
// worktree it did not make is never touched), unless it has uncommitted
// changes: then it says why the session is kept. Its branch stays. dryRun
// only checks.
func removeOwnedWorktree(wt *worktree.Worktree, dryRun bool) (kept string, err error) {
	if wt == nil || !wt.Owned || wt.Path == "" {
		return "", nil
	}
	if _, err := os.Stat(wt.Path); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	changes, err := worktree.WorktreeChanges(wt.Path)
	if err != nil {
		return "its worktree " + wt.Path + " could not be checked: " + err.Error(), nil
	}
	if len(changes) > 0 {
		return worktreeKept(wt.Path, changes), nil
	}
	if dryRun {
		return "", nil
	}
	if err := worktree.RemoveWorktree(wt.Path); err != nil {
		return "its worktree " + wt.Path + " could not be removed: " + err.Error(), nil
	}
	return "", nil
}

// worktreeKept says why a worktree with files only it holds is kept,
// naming the first few of them (lines of git status --porcelain --ignored).
func worktreeKept(path string, lines []string) string {
	var names []string
	for _, l := range lines {
		if len(names) == 3 {
			names = append(names, "...")
			break
		}
		if len(l) > 3 {
			names = append(names, l[3:])
		}
	}
	return fmt.Sprintf("its worktree %s has %d uncommitted, untracked or ignored file(s) (%s); commit, move or delete them, then prune again",
		path, len(lines), strings.Join(names, ", "))
}

// leaseBlocker says whether another holder's attach lease on the session is
// still live. The caller's own lease (holder: its shell, or $KANDEV_HOLDER)
// binds nobody else and goes with the session.
func leaseBlocker(h *state.Home, id, holder string, now time.Time) string {
	l, err := h.ReadLease(id)
	if err != nil {
		return "its lease " + h.LeasePath(id) + " is unreadable: " + err.Error()
	}
	if l.Live(now) && l.AttachedTo != holder {
		return "attached to " + l.AttachedTo + " until " + textTime(l.AttachExpiresAt) + " (kandev detach " + id + " releases it)"
	}
	return ""
}

// demoAgentFile is the demo agent's file for the agent session token, or "".
// The demo agent's ids follow kandev's own id rule (letters, digits, '-',
// '_'), so a token that breaks it cannot name one of its files, nor any other.
func demoAgentFile(h *state.Home, token string) string {
	if state.ValidateID(token) != nil {
		return ""
	}
	return filepath.Join(h.DemoAgentDir(), token+".json")
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
	tempFiles []string
	forkLogs  []string
	dryRun    bool
	// agentDeleted: id -> the agent that deleted (or, dry run, would be
	// asked to delete) its own copy of the session (session/delete).
	agentDeleted map[string]string
}

func (r pruneResult) writeText(w io.Writer, all []*state.Session) {
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
