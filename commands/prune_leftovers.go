package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

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
	held, err := h.Hold(id, history.LogOptions)
	if errors.Is(err, state.ErrOwnerBusy) {
		return false, nil // a fork under way after all
	}
	if err != nil {
		return false, err
	}
	defer held.Release()
	if _, err := os.Lstat(h.RecordPath(id)); !errors.Is(err, os.ErrNotExist) {
		return false, nil // its record is there now: a session, not a leftover
	}
	if err := h.DeleteSessionFiles(id); err != nil {
		return false, fmt.Errorf("prune: %w (fix the permissions, then run kandev prune again)", err)
	}
	return true, nil
}
