package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// sessionChecks look at every session record: unreadable records, torn or
// corrupt logs, interrupted turns (state RUNNING with nobody holding the
// owner lock), paused continuations, orphaned agent processes and processes
// an agent started that outlived their owner.
func sessionChecks(p *probe) []check {
	h := p.h
	dir := filepath.Join(h.Dir, "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []check{{Name: "sessions", Message: "cannot list " + dir + ": " + err.Error(), Fix: "chmod 700 " + shellQuote(dir)}}
	}
	var out []check
	n := 0
	tagged := proc.TaggedProcesses(h.Dir)
	for _, e := range entries {
		id, ok := recordID(e.Name())
		if !ok {
			continue
		}
		n++
		out = append(out, sessionCheck(p, id, tagged[id])...)
	}
	if len(out) == 0 {
		return []check{{Name: "sessions", OK: true, Message: fmt.Sprintf("%d session(s): records readable, logs intact, none interrupted", n)}}
	}
	return out
}

// recordID is the session id of a record file name (not a lease, not a temp file).
func recordID(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || strings.HasPrefix(name, ".") || strings.HasSuffix(id, ".lease") {
		return "", false
	}
	return id, state.ValidateID(id) == nil
}

// sessionCheck checks one session; tagged are the live processes carrying its id.
func sessionCheck(p *probe, id string, tagged []proc.Proc) []check {
	h := p.h
	name := "session " + id
	s, err := h.LoadSession(id)
	if errors.Is(err, state.ErrNewerFormat) {
		return []check{{Name: name, Message: err.Error(), Fix: "upgrade kandev (this one writes format " + strconv.Itoa(state.Format) + ")"}}
	}
	if err != nil {
		path := h.RecordPath(id)
		return []check{{Name: name, Message: "record unreadable: " + strings.TrimSuffix(err.Error(), "; run kandev doctor"),
			Fix: "mv " + shellQuote(path) + " " + shellQuote(path+".broken") + " (kandev then ignores it; its log stays in " + h.LogPath(id) + ")"}}
	}
	var out []check
	ownerAlive, _ := h.OwnerAlive(id)
	if !ownerAlive { // a live owner may be mid-append: its tail is not torn
		out = append(out, logChecks(h, id)...)
	}
	if len(tagged) > 0 && !ownerAlive && !h.AgentAlive(id) { // its supervisor still stopping it is no survivor
		out = append(out, survivorCheck(name, tagged))
	}
	if l, _ := h.ReadLease(id); l.Beyond(p.now) != "" {
		out = append(out, check{Name: name, Message: l.Beyond(p.now), Fix: "kandev detach " + id + " --holder " + shellQuote(l.AttachedTo)})
	}
	st := p.observe(s)
	switch {
	case st.Reason == verdict.ReasonStaleExecution:
		out = append(out, check{Name: name, Message: fmt.Sprintf("orphaned agent process %d is still running but its kandev owner is gone", s.AgentPID),
			Fix: orphanFix(s)})
	case st.Badge == verdict.BadgeNeedsResume:
		out = append(out, check{Name: name, Message: "interrupted: state " + s.State + " but no process holds its owner lock (the owner died mid-turn)",
			Fix: "kandev resume " + id})
	case st.Badge == verdict.BadgePaused:
		out = append(out, check{Name: name, Message: "automatic continuation paused: " + st.Paused, Fix: st.Next})
	}
	return out
}

// survivorCheck reports processes that an agent of the session started and
// that outlived its owner (found by the session tag in their environment).
func survivorCheck(name string, procs []proc.Proc) check {
	var list, pids []string
	for _, p := range procs {
		list = append(list, fmt.Sprintf("%d (%s)", p.PID, history.Clip(p.Command, 60)))
		pids = append(pids, strconv.Itoa(p.PID))
	}
	return check{Name: name, Message: fmt.Sprintf("%d process(es) started by its agent outlived their owner: %s", len(procs), strings.Join(list, ", ")),
		Fix: "kill " + strings.Join(pids, " ")}
}

// logChecks read the whole log: a torn tail (repair truncates it), lines
// that do not parse and seq numbers that repeat or go back. The last two
// have no fix in place, since kandev never rewrites a log: readers skip such
// lines and keep the file order, and doctor says so.
func logChecks(h *state.Home, id string) []check {
	name, path := "session "+id, h.LogPath(id)
	lh, err := eventlog.InspectLog(path)
	var out []check
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil
	case err != nil:
		return []check{{Name: name, Message: "event log unreadable: " + err.Error(), Fix: "chmod 600 " + shellQuote(path) + " (and replace it if it is a link)"}}
	case lh.TornBytes > 0:
		out = append(out, check{Name: name, Message: fmt.Sprintf("event log ends in a torn line (%d bytes: a write cut short by a crash or a failing disk)", lh.TornBytes),
			Fix: "kandev repair " + id})
	}
	if n := len(lh.CorruptLines); n > 0 {
		where := fmt.Sprintf("at byte %d", lh.CorruptLines[0])
		if lh.CorruptAfter[0] > 0 {
			where = fmt.Sprintf("after seq %d, %s", lh.CorruptAfter[0], where)
		}
		out = append(out, check{Name: name, Message: fmt.Sprintf("event log has %d line(s) that are not readable events (first %s: not JSON, or a seq that is not a whole number from 1 to %d); readers skip them and number on from the last readable event", n, where, int64(eventlog.MaxSeq)),
			Fix: "none in place (a log is never rewritten); kandev transcript " + id + " shows what is readable"})
	}
	if n := len(lh.SeqFaults); n > 0 {
		f := lh.SeqFaults[0]
		out = append(out, check{Name: name, Message: fmt.Sprintf("event log has %d event(s) whose seq repeats or goes back (first: seq %d after seq %d, at byte %d): two processes wrote it", n, f.Seq, f.After, f.Offset),
			Fix: "none in place (a log is never rewritten); readers keep the file order. Copy " + shellQuote(path) + " aside if you need the original"})
	}
	if lh.SeqGaps > 0 && len(lh.CorruptLines) == 0 {
		out = append(out, check{Name: name, Message: fmt.Sprintf("event log skips seq numbers in %d place(s): events are missing", lh.SeqGaps),
			Fix: "none in place (a log is never rewritten); kandev export refuses it, kandev transcript " + id + " shows what is there"})
	}
	return out
}

// leftoverChecks name the files a killed process left that no session owns.
func leftoverChecks(h *state.Home, now time.Time) []check {
	left, err := h.Leftovers(now)
	if err != nil {
		return nil // sessionChecks already reported an unlistable directory
	}
	var out []check
	for _, l := range left {
		if l.Kind == "temp" {
			out = append(out, check{Name: "leftover", Message: l.Path + " is the temp file of a write that never finished",
				Fix: "kandev prune removes it (or rm " + shellQuote(l.Path) + ")"})
			continue
		}
		if forkLeftover(h, l) {
			out = append(out, check{Name: "leftover", Message: l.Path + " is the log of a fork killed before its record was written",
				Fix: "kandev prune removes it (or rm " + shellQuote(l.Path) + "); fork the parent again"})
			continue
		}
		out = append(out, check{Name: "leftover", Message: l.Path + " is an event log with no session record (an import killed midway, or a record moved away)",
			Fix: "kandev import --keep-id BUNDLE again to finish the import, or move " + shellQuote(l.Path) + " out of the home"})
	}
	return out
}

// orphanFix stops an orphaned agent: resume does it for a live session, a
// finished one can only be killed.
func orphanFix(s *state.Session) string {
	if state.IsTerminal(s.State) {
		return fmt.Sprintf("kill %d", s.AgentPID)
	}
	return fmt.Sprintf("kandev resume %s (stops it, then restores the session), or kill %d", s.ID, s.AgentPID)
}
