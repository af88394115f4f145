package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/state"
)

// BundleVersion is the export format: a JSONL file whose first line is
// {"kandev_bundle":1,"session":{record}} and whose other lines are the
// session's events, seq 1 to n, in the event log's own line format.
const BundleVersion = 1

// bundleHeader is the first line of a bundle.
type bundleHeader struct {
	Version int            `json:"kandev_bundle"`
	Session *state.Session `json:"session"`
}

// exportCmd is kandev export.
type exportCmd struct {
	SessionRef
}

// Help shows an example.
func (c *exportCmd) Help() string {
	return "Writes one self-contained JSONL bundle (the session record, then every event) to stdout.\n" +
		"Secrets are redacted; the inbox, the lease and the agent's own files are not included.\n\n" +
		"Example:\n  kandev export 20261130 > session.kandev.jsonl"
}

func (c *exportCmd) readsOnly() bool { return true }

// Run writes the bundle to stdout.
func (c *exportCmd) Run(env *Env) error {
	h, s, err := c.load(env, needAny)
	if err != nil {
		return err
	}
	rec := history.RedactSession(*s)
	out := bufio.NewWriterSize(env.Out.Out, 256<<10)
	head, err := json.Marshal(bundleHeader{Version: BundleVersion, Session: &rec})
	if err != nil {
		return err
	}
	out.Write(append(head, '\n'))
	var werr error
	want := int64(1)
	rep, err := eventlog.ScanLog(h.LogPath(s.ID), func(e eventlog.Event) bool {
		if e.Seq != want && werr == nil {
			werr = fmt.Errorf("the log of %s has a gap before seq %d (expected %d): run kandev doctor; the bundle would not import", s.ID, e.Seq, want)
		}
		want = e.Seq + 1
		if e.Raw != nil { // an unknown event goes as stored: this kandev cannot know its fields
			out.Write(append(e.Raw, '\n'))
			return true
		}
		history.RedactEvent(&e) // they were redacted when written; this is for logs written otherwise
		b, err := json.Marshal(e)
		if err != nil {
			werr = err
			return false
		}
		out.Write(append(b, '\n'))
		return true
	})
	if err != nil && !isNotFound(err) {
		return err
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write the bundle: %w", err)
	}
	if p := rep.Problems(); p != "" {
		fmt.Fprintln(env.Out.Err, "kandev: warning: "+p)
	}
	return werr
}

// importCmd is kandev import.
type importCmd struct {
	File   string `arg:"" help:"A bundle written by kandev export (- reads stdin)."`
	KeepID bool   `name:"keep-id" help:"Keep the bundle's session id (fails if this home has it)."`
}

// Help shows an example.
func (c *importCmd) Help() string {
	return "Checks the whole bundle first and writes nothing unless it is intact.\n" +
		"The session gets a new id, and starts a fresh agent session that is given the stored history\n" +
		"with its next prompt; with --keep-id it keeps its id and the agent's resume token (to move a\n" +
		"session to another machine). An active session is imported idle (WAITING_FOR_INPUT).\n\n" +
		"Example:\n  kandev import session.kandev.jsonl\n  kandev import --keep-id session.kandev.jsonl"
}

// errIDTaken is a --keep-id import whose id the home already has (exit 3).
type errIDTaken struct{ id, home string }

func (e errIDTaken) Error() string {
	return fmt.Sprintf("session %s already exists in %s (or its event log does, without a record: kandev doctor lists such files); import without --keep-id to give it a new id", e.id, e.home)
}

// Is makes ExitCode map it to a conflict.
func (e errIDTaken) Is(target error) bool { return target == state.ErrOwnerBusy }

// Run validates the bundle, then writes the log and the record.
func (c *importCmd) Run(env *Env) error {
	in, err := c.open(env)
	if err != nil {
		return err
	}
	defer in.Close()
	id := ""
	if !c.KeepID {
		id = state.NewID(env.Now())
	}
	rec, log, events, err := readBundle(in, id)
	if err != nil {
		return fmt.Errorf("import %s: %w; nothing was imported", c.File, err)
	}
	oldID := rec.ID
	if id == "" {
		id = oldID
	}
	imported := importedRecord(*rec, id, c.KeepID, env.Now())
	h, err := env.Home()
	if err != nil {
		return err
	}
	unlock, err := h.LockRecord(id)
	if err != nil {
		return err
	}
	defer unlock()
	// The log goes first and the record last: the record is what makes a
	// session exist, so an import killed before it is invisible, and the
	// log it left (the same bytes) is replaced when the import is retried.
	for _, p := range []string{h.RecordPath(id), h.LogPath(id)} {
		if _, err := os.Lstat(p); err == nil && !h.IsImportLeftover(id, log) {
			return errIDTaken{id: id, home: h.Dir}
		}
	}
	if err := safefile.WriteFileAtomic(h.LogPath(id), log); err != nil {
		return fmt.Errorf("import %s: %w; nothing was imported", c.File, err)
	}
	if err := h.CreateSession(&imported); err != nil {
		os.Remove(h.LogPath(id))
		return fmt.Errorf("import %s: %w; nothing was imported", c.File, err)
	}
	env.Out.Object(importOutput{Session: imported, Import: importInfo{File: c.File, Events: events, OriginalID: oldID}},
		func(w io.Writer) {
			fmt.Fprintln(w, id)
			fmt.Fprintf(w, "imported %d events from %s (exported as %s); state %s\n", events, c.File, oldID, imported.State)
		})
	return nil
}

func (c *importCmd) open(env *Env) (io.ReadCloser, error) {
	if c.File == "-" {
		return io.NopCloser(env.Stdin), nil
	}
	f, err := os.Open(c.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("bundle %s: %w", c.File, state.ErrNotFound)
	}
	return f, err
}

// readBundle checks a whole bundle: the header line, then one event per
// line with seq 1, 2, ... n of the header's session. It returns the record
// and the event log for session id (the bundle's own id when id is ""):
// each event with its session id replaced and redacted again. Errors name
// the line.
func readBundle(r io.Reader, id string) (rec *state.Session, log []byte, events int, err error) {
	var head *state.Session
	var out bytes.Buffer
	n := 0
	var bad error
	rerr := eventlog.Lines(r, func(line []byte) bool {
		n++
		if n == 1 {
			head, bad = readBundleHeader(line)
			if bad == nil && id == "" {
				id = head.ID
			}
			return bad == nil
		}
		if bad = bundleEvent(&out, line, n, head.ID, id); bad != nil {
			return false
		}
		events++
		return true
	})
	switch {
	case rerr != nil:
		return nil, nil, 0, rerr
	case bad != nil:
		return nil, nil, 0, bad
	case n == 0:
		return nil, nil, 0, errors.New("line 1 is empty: not a kandev bundle")
	}
	return head, out.Bytes(), events, nil
}

// readBundleHeader checks a bundle's first line and returns its record.
func readBundleHeader(line []byte) (*state.Session, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("line 1 is empty: not a kandev bundle")
	}
	if err := state.CheckNesting(line); err != nil {
		return nil, fmt.Errorf("line 1: the session record: %w", err)
	}
	var head bundleHeader
	if err := json.Unmarshal(line, &head); err != nil || head.Version == 0 {
		return nil, errors.New(`line 1: not a kandev bundle header ({"kandev_bundle":1,"session":{...}}); make bundles with kandev export`)
	}
	if head.Version != BundleVersion {
		return nil, fmt.Errorf("line 1: bundle version %d, this kandev reads version %d", head.Version, BundleVersion)
	}
	if head.Session == nil {
		return nil, errors.New("line 1: the header has no session record")
	}
	if head.Session.Format > state.Format {
		return nil, &state.NewerFormatError{What: "its session " + head.Session.ID, Format: head.Session.Format}
	}
	if err := state.ValidateID(head.Session.ID); err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	return head.Session, nil
}

// bundleEvent checks line n of a bundle, an event of session from, and
// appends it to out as an event of session id, redacted again.
func bundleEvent(out *bytes.Buffer, line []byte, n int, from, id string) error {
	var e eventlog.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("line %d: not a JSON event (%v)", n, err)
	}
	if want := int64(n - 1); e.Seq != want {
		return fmt.Errorf("line %d: seq %d where %d was due (a bundle holds seq 1 to n without gaps)", n, e.Seq, want)
	}
	if e.Type == "" {
		return fmt.Errorf("line %d: event without a type", n)
	}
	if e.SessionID != from {
		return fmt.Errorf("line %d: event of session %q in the bundle of %s", n, e.SessionID, from)
	}
	e.SessionID = id
	history.RedactEvent(&e)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	out.Write(append(b, '\n'))
	return nil
}

// importedRecord is the record an import writes: idle (no process runs the
// session here), with its new id, its text redacted and no inbox yet. Its
// worktree is never owned: ownership is what lets prune delete a directory,
// and a bundle (a file anyone can edit) cannot establish it. A new
// id also drops the agent's resume token: the original session may still use
// that agent session, so the copy starts a fresh one and is given the stored
// history with its next prompt (docs/resume.md). A copy is also active as of
// its import (now), so it never ties with its original for --latest: the one
// just imported is the one a person means next.
func importedRecord(s state.Session, id string, keepID bool, now time.Time) state.Session {
	s = history.RedactSession(s)
	if s.TaskID == s.ID {
		s.TaskID = id
	}
	s.ID = id
	if s.State == state.StateStarting || s.State == state.StateRunning {
		s.State = state.StateWaitingForInput
	}
	s.AgentPID, s.AgentStart, s.OwnerPID = 0, "", 0
	s.CurrentTurn, s.PermissionPending = "", false
	s.InboxOffset = 0
	if s.Worktree != nil { // a bundle's word proves nothing here: prune removes only what this machine made
		wt := *s.Worktree
		wt.Owned = false
		s.Worktree = &wt
	}
	if !keepID {
		s.ResumeToken = ""
		if now.After(s.LastActivityAt) {
			s.LastActivityAt = now.UTC()
		}
	}
	return s
}
