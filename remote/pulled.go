package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// What a pull takes from a remote is read as a file from a stranger would
// be: whoever can push refs/kandev/* wrote it. These bound it.
const (
	// MaxPulledLineBytes bounds one log line of a pulled session.
	MaxPulledLineBytes = 8 << 20
	// MaxPulledRecordBytes bounds a pulled session's record.
	MaxPulledRecordBytes = 4 << 20
)

// ErrRefusedPull marks a session on the remote that is not taken: its log
// or record breaks a rule kandev's own writes keep (exit 1).
var ErrRefusedPull = errors.New("refused")

func refusedPull(id, url, why string) error {
	return fmt.Errorf("%w: session %s on %s: %s; nothing of it was written here (it was not written by kandev as pushed: ask whoever can push to the remote, or delete it there with git push REMOTE :refs/kandev/sessions/%s)", ErrRefusedPull, id, url, why, id)
}

// checkPulledLog checks the lines a pull is about to append after a local
// log whose last seq is prev: each a complete line within the size bound,
// one JSON event nested no deeper than a record may be, its seq the one
// after the line before, and nothing the redactor would still change.
func checkPulledLog(id, url string, data []byte, prev, firstLine int64) error {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return refusedPull(id, url, "its log ends in a cut line")
	}
	n := firstLine
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		data = data[i+1:]
		where := fmt.Sprintf("log line %d", n)
		if len(line) > MaxPulledLineBytes {
			return refusedPull(id, url, fmt.Sprintf("%s is %d bytes, over the limit of %d", where, len(line), MaxPulledLineBytes))
		}
		if err := state.CheckNesting(line); err != nil {
			return refusedPull(id, url, where+": "+err.Error())
		}
		e, ok := eventlog.DecodeEvent(line)
		if !ok {
			return refusedPull(id, url, where+" is not an event")
		}
		if e.Seq != prev+1 {
			return refusedPull(id, url, fmt.Sprintf("%s has seq %d after %d (a log's seq counts 1, 2, 3, ... with no gap or repeat)", where, e.Seq, prev))
		}
		red := e
		history.RedactEvent(&red)
		if !reflect.DeepEqual(red, e) {
			return refusedPull(id, url, fmt.Sprintf("%s (seq %d, %s) holds what looks like a secret", where, e.Seq, e.Type))
		}
		prev = e.Seq
		n++
	}
	return nil
}

// checkPulledRecord reads a pulled record: within the size bound, nested
// no deeper than the home allows, naming the session it is the record of,
// of a format this kandev reads, and redacted.
func checkPulledRecord(id, url string, b []byte) (state.Session, error) {
	var rec state.Session
	if len(b) > MaxPulledRecordBytes {
		return rec, refusedPull(id, url, fmt.Sprintf("its record is %d bytes, over the limit of %d", len(b), MaxPulledRecordBytes))
	}
	if err := state.CheckNesting(b); err != nil {
		return rec, refusedPull(id, url, "its record: "+err.Error())
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, refusedPull(id, url, "its record is not JSON: "+err.Error())
	}
	if rec.ID != id {
		return rec, refusedPull(id, url, fmt.Sprintf("its record names id %q", rec.ID))
	}
	for _, m := range rec.MCPConfig {
		if err := setup.CheckName(m.Name, "its record"); err != nil {
			return rec, refusedPull(id, url, err.Error())
		}
	}
	if rec.Format > state.Format {
		return rec, &state.NewerFormatError{What: "session " + id + " on " + url, Format: rec.Format}
	}
	if !reflect.DeepEqual(history.RedactSession(rec), rec) {
		return rec, refusedPull(id, url, "its record holds what looks like a secret")
	}
	return rec, nil
}

// LocalRecord is a pulled record as this machine keeps it. What is this
// machine's own is never taken from the remote: the processes, inbox
// offsets, parked requests, scheduled recover and lease-like warm state of
// the other machine are cleared (or kept from local, this machine's record
// before the pull, nil when it had none); a worktree is never owned (only
// what this machine made may be removed by prune); MCP servers this machine
// has not trusted as they are wait for kandev trust (setup.PulledTrust); and
// a worktree recorded there maps to the local clone of the same repository
// when there is one.
func LocalRecord(rec state.Session, local *state.Session, origin Origin, clone Clone, mapped bool) state.Session {
	rec.OwnerPID, rec.AgentPID, rec.AgentStart, rec.WarmUntil = 0, 0, "", nil
	rec.OwnerDetached, rec.ParkedRequests, rec.PermissionPending = false, nil, false
	rec.InboxOffset, rec.InboxServed = 0, 0
	var scheduled *state.ScheduledRecover
	if local != nil {
		rec.InboxOffset, rec.InboxServed = local.InboxOffset, local.InboxServed
		if local.Limit != nil {
			scheduled = local.Limit.Scheduled
		}
	}
	if rec.Limit != nil {
		l := *rec.Limit
		l.Scheduled = scheduled
		rec.Limit = &l
	}
	rec.TrustPending = setup.PulledTrust(local, rec.MCPConfig)
	placePulled(&rec, local, origin, clone, mapped)
	return rec
}

// placePulled decides where a pulled session works on this machine: in
// the local clone its worktree maps to; else where this machine's own
// record had it; else nowhere: the remote's cwd is kept to be shown, in
// PulledCwd, and the session pauses (an agent never writes where a remote
// chose, nor has it mounted into a container).
func placePulled(rec *state.Session, local *state.Session, origin Origin, clone Clone, mapped bool) {
	rec.PulledCwd = ""
	if rec.Worktree != nil && mapped {
		w := *rec.Worktree
		w.Owned = false
		w.Path, w.Valid, w.Problem = clone.Path, true, ""
		rec.Worktree = &w
		rec.Cwd = clone.Path
		rec.Workspace = filepath.Base(clone.Path)
		if rel := filepath.FromSlash(origin.Rel); rel != "" && rel != "." {
			if !filepath.IsLocal(rel) {
				rec.PulledCwd = filepath.Join(clone.Path, rel) // outside the clone: not where it points
				return
			}
			rec.Cwd = filepath.Join(clone.Path, rel)
		}
		return
	}
	if local != nil {
		rec.Cwd, rec.Workspace, rec.PulledCwd = local.Cwd, local.Workspace, local.PulledCwd
		rec.Worktree = local.Worktree
		return
	}
	if rec.Worktree != nil {
		w := *rec.Worktree
		w.Owned, w.Valid = false, false
		w.Problem = fmt.Sprintf("worktree %s is on another machine and no clone of %s (branch %s) here was found to map it to", w.Path, origin.URL, w.Branch)
		rec.Worktree = &w
	}
	rec.PulledCwd = rec.Cwd
	if rec.PulledCwd == "" {
		rec.PulledCwd = "(none recorded)"
	}
}
