package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// pruneSession deletes a finished session's files and the demo agent's file
// for it, holding the owner and record locks so that no kandev process can
// take the session over meanwhile. It returns why a session was kept instead.
func pruneSession(h *state.Home, id, holder string, withWorktree bool, now time.Time) (kept string, err error) {
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return "a live kandev process owns it", nil
	}
	if err != nil {
		return "", err
	}
	defer held.Release()
	unlock, err := h.LockRecord(id)
	if err != nil {
		return "", err
	}
	defer unlock()
	s, err := h.LoadSession(id) // under the lock held holds
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
