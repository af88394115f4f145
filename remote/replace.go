package remote

import (
	"errors"
	"fmt"
	"math"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// openTurn is the turn the log's current conversation ends in without a
// turn_ended (its owner was killed or stopped while apart), "" if none: a
// fork cannot hold it until it is closed (kandev repair).
func openTurn(events []eventlog.Event) string {
	epoch := history.CurrentEpoch(events)
	for i := len(epoch) - 1; i >= 0; i-- {
		switch epoch[i].Type {
		case eventlog.EventTurnEnded:
			return ""
		case eventlog.EventTurnStarted:
			return epoch[i].TurnID
		}
	}
	return ""
}

// forkKeeps reports whether a fork's log holds every turn of the local
// log's current conversation: its copied conversation starts with all of
// them, the same turns with the same text (a fork made at an earlier
// turn, or of another machine's copy, does not).
func forkKeeps(local, fork []eventlog.Event) bool {
	want := history.ForkHistory(history.CurrentEpoch(local), math.MaxInt64)
	got := history.ForkHistory(fork, math.MaxInt64)
	if len(got) < len(want) {
		return false
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.Type || g.TurnID != w.TurnID || g.Content != w.Content || g.ToolCallID != w.ToolCallID {
			return false
		}
	}
	return true
}

// replaceable allows pull --replace of a diverged session only when a
// fork here keeps every turn of the local copy: --replace then drops
// nothing that is in no other log.
func (l *link) replaceable() error {
	local, _, err := eventlog.ReadAll(l.s.home.LogPath(l.id))
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return err
	}
	if t := openTurn(local); t != "" {
		return fmt.Errorf("%w: session %s: --replace would drop turn %s, cut off on this machine; keep it first: %s", ErrDiverged, l.id, t, keepBoth(l.id, true))
	}
	all, err := l.s.home.ListSessions()
	if err != nil {
		return err
	}
	for _, s := range all {
		if s.ParentID != l.id {
			continue
		}
		fork, _, err := eventlog.ReadAll(l.s.home.LogPath(s.ID))
		if err == nil && forkKeeps(local, fork) {
			return nil
		}
	}
	return fmt.Errorf("%w: session %s: --replace would drop this machine's turns, and no fork here holds them all; keep them first: %s", ErrDiverged, l.id, keepBoth(l.id, false))
}

// keepBoth is the commands that keep this machine's copy of a diverged
// session as a new session and then take the remote's.
func keepBoth(id string, open bool) string {
	cmds := fmt.Sprintf("kandev fork %s (this machine's copy as a new session), then kandev pull %s --replace", id, id)
	if open {
		cmds = fmt.Sprintf("kandev repair %s (closes the turn cut off here), ", id) + cmds
	}
	return cmds
}

// diverged is the refusal of a session whose logs diverged, naming the
// commands that keep both copies.
func (l *link) diverged() error {
	local, _, _ := eventlog.ReadAll(l.s.home.LogPath(l.id))
	return &DivergedError{ID: l.id, URL: l.shown, OpenTurn: openTurn(local) != ""}
}
