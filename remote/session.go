package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/state"
)

func sessionRef(id string) plumbing.ReferenceName {
	return plumbing.ReferenceName(refsPrefix + "sessions/" + id)
}

func ownerRef(id string) plumbing.ReferenceName {
	return plumbing.ReferenceName(refsPrefix + "owners/" + id)
}

// Options are what every push, pull and claim needs besides the session.
type Options struct {
	// Remote is --remote: a remote of the session's repository, or a URL or
	// path ("" : the one it synced with, else [sync] remote, else origin).
	Remote string
	// Dir is where the command runs: the local clone for a pull.
	Dir     string
	Machine string
	Now     func() time.Time
	// TTL is how long a claim lasts unless renewed.
	TTL time.Duration
	// Timeout bounds each conversation with the remote ([sync] timeout_seconds).
	Timeout time.Duration
	// MaxPullBytes bounds what one pull takes of a log ([sync] max_pull_bytes).
	MaxPullBytes int64
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// link is one session and the remote it travels through.
type link struct {
	s   *store
	id  string
	url string
	// shown is url without a password or token: what is printed and stored.
	shown string
	w     wire
	sy    *Synced // nil: never synced
	opt   Options
}

func newLink(s *store, id, url string, sy *Synced, opt Options) *link {
	shown := WithoutSecret(url)
	if sy == nil || sy.URL != shown { // another remote: nothing agreed with it yet
		sy = &Synced{URL: shown}
	}
	return &link{s: s, id: id, url: url, shown: shown, w: s.wire(url, opt.Timeout), sy: sy, opt: opt}
}

// view is the remote's side of a session at one instant.
type view struct {
	sess, owner plumbing.Hash
	claim       *Claim
}

// look reads the remote's refs of the session and fetches what the store
// lacks of them. An advertisement lists every ref at one instant, so the
// session and its claim are seen together.
func (l *link) look(ctx context.Context, refs map[plumbing.ReferenceName]plumbing.Hash) (view, error) {
	var err error
	if refs == nil {
		if refs, err = l.w.refs(ctx); err != nil {
			return view{}, err
		}
	}
	v := view{sess: refs[sessionRef(l.id)], owner: refs[ownerRef(l.id)]}
	want := map[plumbing.ReferenceName]plumbing.Hash{}
	if !v.owner.IsZero() && !l.s.has(v.owner) {
		want[ownerRef(l.id)] = v.owner
	}
	if !v.sess.IsZero() && !l.s.has(v.sess) {
		want[sessionRef(l.id)] = v.sess
	}
	if err := l.w.fetch(ctx, want, l.haves()); err != nil {
		return view{}, err
	}
	for _, h := range want {
		if !l.s.has(h) {
			return view{}, fmt.Errorf("session %s: %w (fetching from %s)", l.id, errStale, l.shown)
		}
	}
	if !v.owner.IsZero() {
		if v.claim, err = l.s.readClaim(v.owner); err != nil {
			return view{}, fmt.Errorf("claim of session %s on %s: %w", l.id, l.shown, err)
		}
	}
	return v, nil
}

func (l *link) haves() []plumbing.Hash {
	if l.sy.Commit == "" {
		return nil
	}
	return []plumbing.Hash{plumbing.NewHash(l.sy.Commit)}
}

func (s *store) has(h plumbing.Hash) bool {
	_, err := s.objs.EncodedObject(plumbing.AnyObject, h)
	return err == nil
}

// sides compares the local log with the remote's at v.
type sides struct {
	Sides
	step        Step
	localBytes  int64
	remoteBytes int64
	remoteLines int64
}

func (l *link) compare(v view) (sides, error) {
	var sd sides
	if _, err := os.Lstat(l.s.home.LogPath(l.id)); errors.Is(err, os.ErrNotExist) && l.sy.Commit != "" {
		// Deleted here since it last synced (kandev prune): nothing is agreed.
		l.sy = &Synced{URL: l.shown}
	}
	from := l.sy.LogBytes
	extra, exists, err := readLogFrom(l.s.home.LogPath(l.id), from)
	if err != nil {
		return sd, err
	}
	sd.LocalExists, sd.LocalExtra = exists, extra
	sd.localBytes = from + int64(len(extra))
	sd.RemoteExists = !v.sess.IsZero()
	sd.Descends = true
	switch {
	case !sd.RemoteExists:
	case v.sess.String() == l.sy.Commit:
		sd.remoteBytes, sd.remoteLines = l.sy.LogBytes, l.sy.LogLines
	default:
		if sd.Descends, err = l.s.descends(v.sess, plumbing.NewHash(l.sy.Commit)); err != nil {
			return sd, err
		}
		snap, err := l.s.readSnapshot(v.sess)
		if err != nil {
			return sd, err
		}
		sd.remoteBytes, sd.remoteLines = snap.Meta.LogBytes, snap.Meta.LogLines
		if sd.Descends {
			if sd.RemoteExtra, err = l.s.logFrom(v.sess, from, l.opt.MaxPullBytes); err != nil {
				var over *PullBoundError
				if errors.As(err, &over) {
					over.ID, over.URL = l.id, l.shown
				}
				return sd, err
			}
		}
	}
	sd.step = Compare(sd.Sides)
	return sd, nil
}

// readLogFrom returns the log's complete lines from byte offset from; a
// torn last line (a crash mid-append) is not part of it.
func readLogFrom(path string, from int64) ([]byte, bool, error) {
	if err := safefile.RefuseLinks(path); err != nil {
		return nil, true, err // never read, and never push, a file a link names
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	if fi.Size() < from {
		return nil, true, fmt.Errorf("the log %s is shorter (%d bytes) than what was synced (%d): it was cut by hand; kandev fork or export it", path, fi.Size(), from)
	}
	b := make([]byte, fi.Size()-from)
	if _, err := f.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, true, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	return b, true, nil
}

// checkLogRedacted refuses log lines the redactor would still change (the
// same detectors that run before a line is written): a line written by
// hand, or by an older kandev whose detectors missed it.
func checkLogRedacted(id string, data []byte, firstLine int64) error {
	n := firstLine
	var bad error
	check := func(line []byte) bool {
		defer func() { n++ }()
		e, ok := eventlog.DecodeEvent(line)
		if !ok {
			return true
		}
		red := e
		history.RedactEvent(&red)
		if !reflect.DeepEqual(red, e) {
			bad = unredacted(id, fmt.Sprintf("log line %d (seq %d, %s)", n, e.Seq, e.Type))
			return false
		}
		return true
	}
	if err := eventlog.Lines(bytes.NewReader(data), check); err != nil {
		return err
	}
	return bad
}

// checkRecordRedacted refuses a record whose display text the redactor
// would change (history.RedactSession).
func checkRecordRedacted(id string, record []byte) error {
	var s state.Session
	if err := json.Unmarshal(record, &s); err != nil {
		return fmt.Errorf("the record of session %s: %w", id, err)
	}
	if !reflect.DeepEqual(history.RedactSession(s), s) {
		return unredacted(id, "record")
	}
	return nil
}

func unredacted(id, what string) error {
	return fmt.Errorf("%w: session %s: its %s holds what looks like a secret; it is not pushed (only redacted data leaves this machine)", ErrUnredacted, id, what)
}

// claimUpdate is the owners ref update a push carries.
type claimUpdate struct {
	up    refUpdate
	claim Claim
}

func (l *link) claimUpdate(v view, c Claim) (claimUpdate, error) {
	b, err := l.s.buildClaim(c, l.opt.now())
	if err != nil {
		return claimUpdate{}, err
	}
	return claimUpdate{up: refUpdate{Name: ownerRef(l.id), Old: v.owner, New: b.commit, Objects: b.objects}, claim: c}, nil
}

// bounded is the remote's claim at owner ref h as this machine honours it
// (Claim.Bounded), remembering when it first saw that claim.
func (l *link) bounded(c *Claim, h plumbing.Hash, now time.Time) *Claim {
	if hs := hashString(h); hs != l.sy.SeenClaim {
		l.sy.SeenClaim, l.sy.SeenClaimAt = hs, now
	}
	return c.Bounded(l.sy.SeenClaimAt, now)
}

// keepSeen writes down when a claim that refused this machine was first
// seen, so that the next try counts from then (the caller holds the sync lock).
func (l *link) keepSeen(err error) error {
	if errors.Is(err, ErrClaimHeld) && l.sy.SeenClaim != "" {
		if werr := l.s.writeSynced(l.id, l.sy); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// holding is the claim this machine holds, if the remote still has it.
func (l *link) held() (*Claim, string) {
	if l.sy.Claim == nil {
		return nil, ""
	}
	return l.sy.Claim, l.sy.ClaimHash
}

// sessionUpdate builds the commit that sends the local log's new lines and
// the record, on top of the remote's commit v.sess.
func (l *link) sessionUpdate(v view, sd sides, rec *state.Session) (refUpdate, Meta, error) {
	appended := sd.LocalExtra[len(sd.RemoteExtra):]
	if err := checkLogRedacted(l.id, appended, sd.remoteLines+1); err != nil {
		return refUpdate{}, Meta{}, err
	}
	record, err := os.ReadFile(l.s.home.RecordPath(l.id))
	if err != nil {
		return refUpdate{}, Meta{}, err
	}
	if err := checkRecordRedacted(l.id, record); err != nil {
		return refUpdate{}, Meta{}, err
	}
	lines := sd.remoteLines + int64(bytes.Count(appended, []byte{'\n'}))
	meta := Meta{Format: snapshotFormat, ID: l.id, LogBytes: sd.localBytes, LogLines: lines, Machine: l.opt.Machine, Origin: originOf(nil, rec, l.shown)}
	b, err := l.s.buildSession(v.sess, meta, record, appended, sd.remoteLines+1, l.opt.now())
	if err != nil {
		return refUpdate{}, Meta{}, err
	}
	return refUpdate{Name: sessionRef(l.id), Old: v.sess, New: b.commit, Objects: b.objects}, meta, nil
}

// agreed records that both sides hold commit (with meta's log).
func (l *link) agreed(commit plumbing.Hash, bytes, lines int64) {
	l.sy.Commit, l.sy.LogBytes, l.sy.LogLines = commit.String(), bytes, lines
}

func (l *link) save() error {
	l.sy.URL = l.shown
	l.sy.SyncedAt = l.opt.now()
	return l.s.writeSynced(l.id, l.sy)
}

// takeRemote makes the local copy the remote's v.sess: appends the lines
// the local log lacks, then writes the record (its worktree mapped to the
// local clone), then the sync file. Each step is durable before the next,
// so a pull cut off anywhere completes the next time (Compare sees the
// local log as a prefix of the remote one).
func (l *link) takeRemote(ctx context.Context, v view, sd sides) (*state.Session, error) {
	l.s.objMu.Lock()
	snap, err := l.s.readSnapshot(v.sess)
	l.s.objMu.Unlock()
	if err != nil {
		return nil, err
	}
	if snap.Meta.ID != l.id {
		return nil, refusedPull(l.id, l.shown, fmt.Sprintf("it holds session %q", snap.Meta.ID))
	}
	path := l.s.home.LogPath(l.id)
	if err := safefile.RefuseLinks(path, l.s.home.RecordPath(l.id), l.s.syncPath(l.id)); err != nil {
		return nil, err
	}
	// Everything is checked before anything is written: a log or record
	// that fails is refused whole.
	rec, err := checkPulledRecord(l.id, l.shown, snap.Record)
	if err != nil {
		return nil, err
	}
	add := sd.RemoteExtra[len(sd.LocalExtra):]
	var prev int64
	if sd.LocalExists {
		last, _, err := eventlog.LastEvent(path)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, err
		}
		prev = last.Seq
	}
	firstLine := l.sy.LogLines + int64(bytes.Count(sd.LocalExtra, []byte{'\n'})) + 1
	if err := checkPulledLog(l.id, l.shown, add, prev, firstLine); err != nil {
		return nil, err
	}
	failpoint.Wait(ctx, failpoint.PullChecked)
	if sd.LocalExists {
		if _, err := eventlog.TruncateTornTail(path); err != nil {
			return nil, err
		}
	}
	if len(add) > 0 {
		if err := safefile.AppendLines(path, add); err != nil {
			return nil, err
		}
		failpoint.Wait(ctx, failpoint.AfterPullAppended)
	}
	var here []Clone
	if c, ok := l.s.cloneAt(l.opt.Dir); ok {
		here = []Clone{c}
	}
	clone, mapped := MapWorktree(snap.Meta.Origin.URL, snap.Meta.Origin.Branch, here)
	if !mapped && rec.Worktree != nil {
		// Not the clone the pull runs in: one that other sessions here use.
		clone, mapped = MapWorktree(snap.Meta.Origin.URL, snap.Meta.Origin.Branch, l.s.knownClones())
	}
	var out state.Session
	if _, err := os.Stat(l.s.home.RecordPath(l.id)); err == nil {
		if _, err := l.s.home.UpdateSession(l.id, func(s *state.Session) error {
			unknown := s.Unknown
			out = LocalRecord(rec, s, snap.Meta.Origin, clone, mapped)
			*s = out
			s.Unknown = unknown
			return nil
		}); err != nil {
			return nil, err
		}
	} else {
		out = LocalRecord(rec, nil, snap.Meta.Origin, clone, mapped)
		if err := l.s.home.CreateSession(&out); err != nil {
			return nil, err
		}
	}
	l.agreed(v.sess, snap.Meta.LogBytes, snap.Meta.LogLines)
	return &out, nil
}

// describe is a claim for status lines, as it stands at now: a released
// or expired claim holds nothing, and says so.
func describe(c *Claim, now time.Time) string {
	switch {
	case c == nil:
		return "none"
	case c.Released:
		return "released by " + c.Machine
	case !now.Before(c.ExpiresAt):
		return fmt.Sprintf("expired at %s (was %s's)", c.ExpiresAt.Local().Format(time.RFC3339), c.Machine)
	}
	return fmt.Sprintf("held by %s (pid %d) until %s", c.Machine, c.PID, c.ExpiresAt.Local().Format(time.RFC3339))
}
