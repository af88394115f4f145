package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/state"
)

// Result is what a push or pull of one session did.
type Result struct {
	ID     string `json:"id"`
	Remote string `json:"remote"`
	// Action: "pushed", "pulled", "up to date", "ahead" (pull: this machine
	// has more; push it), "behind" (push: the remote has more; pull it),
	// "would pull" / "would push" (--dry-run), "new" (--dry-run: only on
	// the remote).
	Action string `json:"action"`
	Commit string `json:"commit,omitempty"`
	// Events is how many log lines the push sent or the pull added.
	Events int64  `json:"events"`
	Claim  *Claim `json:"claim,omitempty"`
	// Worktree is where a pulled session's worktree maps ("" not mapped).
	Worktree string `json:"worktree,omitempty"`
	// RemoteOnly: the session exists only on the remote (before this pull).
	RemoteOnly bool `json:"remote_only,omitempty"`
	// Session is the remote's record of a remote-only session (--dry-run).
	Session *RemoteSession `json:"session,omitempty"`
}

// RemoteSession is what list shows of a session that exists only on a remote.
type RemoteSession struct {
	ID             string    `json:"id"`
	Title          string    `json:"title"`
	Agent          string    `json:"agent"`
	Workspace      string    `json:"workspace"`
	State          string    `json:"state"`
	LastActivityAt time.Time `json:"last_activity_at"`
	Remote         string    `json:"remote"`
}

// Env is what the operations need from the command: the home, the config
// and the options.
type Env struct {
	Home   *state.Home
	Config *state.Config
	Opt    Options
}

func (e Env) fill() (Env, *store, error) {
	if e.Opt.Machine == "" {
		m, err := MachineID(e.Home)
		if err != nil {
			return e, nil, err
		}
		e.Opt.Machine = m
	}
	if e.Opt.TTL <= 0 {
		ttl := state.DefaultTTLSeconds
		if e.Config != nil {
			ttl = e.Config.ClaimTTLSeconds()
		}
		e.Opt.TTL = time.Duration(ttl) * time.Second
	}
	if e.Opt.Dir == "" {
		e.Opt.Dir, _ = os.Getwd()
	}
	s, err := openStore(e.Home)
	return e, s, err
}

// Push sends session id's new events and record to its remote, fast-forward
// only, in one atomic update with its claim: refused (exit 3) when another
// machine holds a live claim, when this machine's claim was taken over, or
// when the remote has events this machine lacks.
func Push(ctx context.Context, e Env, id string) (*Result, error) {
	e, s, err := e.fill()
	if err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := e.Home.LoadSession(id)
	if err != nil {
		return nil, err
	}
	sy, err := s.readSynced(id)
	if err != nil {
		return nil, err
	}
	url, err := resolveURL(e.Config, rec, sy, e.Opt.Dir, e.Opt.Remote)
	if err != nil {
		return nil, err
	}
	l := newLink(s, id, url, sy, e.Opt)
	var res *Result
	err = retryStale(func() error {
		res, err = l.push(ctx, rec, false)
		return err
	})
	return res, err
}

// retryStale repeats an operation a concurrent update made stale; it reads
// the remote again each time.
func retryStale(fn func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = fn(); !errors.Is(err, errStale) {
			return err
		}
		time.Sleep(time.Duration(5+i*20) * time.Millisecond)
	}
	return err
}

// push is one attempt. holding: the caller is the owner running a turn,
// whose claim must still be the remote's (else it is fenced).
func (l *link) push(ctx context.Context, rec *state.Session, holding bool) (*Result, error) {
	res := &Result{ID: l.id, Remote: l.shown}
	var v view
	var sd sides
	var cu claimUpdate
	var su refUpdate
	var meta Meta
	// One connection when the store holds what the remote's refs name: the
	// push session's own advertisement is the look.
	decide := func(refs map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error) {
		v = view{sess: refs[sessionRef(l.id)], owner: refs[ownerRef(l.id)]}
		if (!v.owner.IsZero() && !l.s.has(v.owner)) || (!v.sess.IsZero() && !l.s.has(v.sess)) {
			return nil, errNeedObjects
		}
		var err error
		if !v.owner.IsZero() {
			if v.claim, err = l.s.readClaim(v.owner); err != nil {
				return nil, err
			}
		}
		if sd, err = l.compare(v); err != nil {
			return nil, err
		}
		switch sd.step {
		case Diverged:
			return nil, &DivergedError{ID: l.id, URL: l.shown}
		case TakeRemote, UpToDate:
			return nil, nil
		}
		if cu, err = l.pushClaim(v, holding); err != nil {
			return nil, err
		}
		if su, meta, err = l.sessionUpdate(v, sd, rec); err != nil {
			return nil, err
		}
		return []refUpdate{su, cu.up}, nil
	}
	var err error
	for i := 0; ; i++ {
		err = l.w.pushDecided(ctx, decide)
		if !errors.Is(err, errNeedObjects) || i == 2 {
			break
		}
		if _, err := l.look(ctx, nil); err != nil { // fetches them
			return nil, err
		}
	}
	if err != nil {
		if holding && errors.Is(err, errStale) {
			return nil, l.fenced(ctx)
		}
		return nil, err
	}
	switch sd.step {
	case TakeRemote:
		res.Action = "behind"
		return res, nil
	case UpToDate:
		res.Action = "up to date"
		if !v.sess.IsZero() && v.sess.String() != l.sy.Commit {
			l.agreed(v.sess, sd.remoteBytes, sd.remoteLines) // a push cut off after the remote took it
			return res, l.save()
		}
		return res, nil
	}
	failpoint.Wait(ctx, failpoint.AfterPushAccepted)
	l.agreed(su.New, meta.LogBytes, meta.LogLines)
	l.setClaim(cu)
	res.Action, res.Commit, res.Events = "pushed", su.New.String(), meta.LogLines-sd.remoteLines
	res.Claim = &cu.claim
	return res, l.save()
}

// pushClaim is the claim a push carries: the holder's renewed; otherwise a
// released claim of the next generation, which takes over an expired one
// (fencing its holder) and leaves the session free.
func (l *link) pushClaim(v view, holding bool) (claimUpdate, error) {
	held, heldHash := l.held()
	now := l.opt.now()
	verdict := DecideClaim(ClaimInput{Current: v.claim, CurrentHash: hashString(v.owner), HeldHash: heldHash, Held: held, Machine: l.opt.Machine, Now: now})
	switch {
	case verdict == ClaimKeep:
		c := *held
		c.ExpiresAt = now.Add(l.opt.TTL)
		return l.claimUpdate(v, c)
	case verdict == ClaimFenced || holding:
		return claimUpdate{}, l.fencedBy(v.claim)
	case verdict == ClaimRefused:
		return claimUpdate{}, &ClaimHeldError{ID: l.id, Machine: v.claim.Machine, ExpiresAt: v.claim.ExpiresAt}
	}
	c := NextClaim(v.claim, l.opt.Machine, os.Getpid(), now, 0)
	c.Released = true
	return l.claimUpdate(v, c)
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func (l *link) setClaim(cu claimUpdate) {
	l.sy.ClaimHash = cu.up.New.String()
	l.sy.RemoteClaim = &cu.claim
	l.sy.Claim = nil
	if !cu.claim.Released {
		c := cu.claim
		l.sy.Claim = &c
	}
}

func (l *link) fencedBy(c *Claim) error {
	e := &FencedError{ID: l.id}
	if c != nil {
		e.Machine, e.Generation = c.Machine, c.Generation
	}
	return e
}

// fenced reads who took the claim over, for the error.
func (l *link) fenced(ctx context.Context) error {
	v, err := l.look(ctx, nil)
	if err != nil {
		return l.fencedBy(nil)
	}
	return l.fencedBy(v.claim)
}

// Pull brings session id from the remote: fast-forward only, refused when
// both sides appended (nothing is changed then), or while a kandev process
// on this machine owns the session.
func Pull(ctx context.Context, e Env, id string, dryRun, replace bool) (*Result, error) {
	e, s, err := e.fill()
	if err != nil {
		return nil, err
	}
	url, sy, err := pullURL(e, s, id)
	if err != nil {
		return nil, err
	}
	l := newLink(s, id, url, sy, e.Opt)
	refs, err := l.w.refs(ctx)
	if err != nil {
		return nil, err
	}
	if refs[sessionRef(id)].IsZero() {
		return nil, fmt.Errorf("session %s is not on %s: %w", id, WithoutSecret(url), state.ErrNotFound)
	}
	return l.pull(ctx, refs, dryRun, replace)
}

// pullURL is where a pull of id comes from: --remote, else the remote the
// session synced with, else the remote of the clone the command runs in.
func pullURL(e Env, s *store, id string) (string, *Synced, error) {
	sy, err := s.readSynced(id)
	if err != nil {
		return "", nil, err
	}
	var rec *state.Session
	if r, err := e.Home.LoadSession(id); err == nil {
		rec = r
	}
	url, err := resolveURL(e.Config, rec, sy, e.Opt.Dir, e.Opt.Remote)
	return url, sy, err
}

func (l *link) pull(ctx context.Context, refs map[plumbing.ReferenceName]plumbing.Hash, dryRun, replace bool) (*Result, error) {
	// A session this machine has never seen has no owner and no other sync
	// here (nothing can name it before its record exists, which is written
	// after its log): the locks, two file creations each, are for the others.
	if !l.s.isNew(l.id) {
		unlock, err := l.s.lock(ctx, l.id)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if !dryRun {
			own, err := l.s.home.AcquireOwner(l.id)
			if err != nil {
				return nil, err // a live owner here: its turn first
			}
			defer own.Release()
		}
	}
	l.s.objMu.Lock()
	v, err := l.look(ctx, refs)
	var sd sides
	if err == nil {
		sd, err = l.compare(v)
	}
	l.s.objMu.Unlock()
	if err != nil {
		return nil, err
	}
	res := &Result{ID: l.id, Remote: l.shown, Claim: v.claim, RemoteOnly: !sd.LocalExists}
	if replace && sd.step == Diverged {
		if err := l.replaceable(); err != nil {
			return nil, err
		}
		// The local copy is kept by a fork: take the remote's whole.
		if !dryRun {
			if err := os.Remove(l.s.home.LogPath(l.id)); err != nil {
				return nil, err
			}
		}
		l.sy = &Synced{URL: l.shown}
		if sd, err = l.compare(v); err != nil {
			return nil, err
		}
	}
	switch sd.step {
	case Diverged:
		return nil, &DivergedError{ID: l.id, URL: l.shown}
	case SendLocal:
		res.Action = "ahead"
		return res, nil
	case UpToDate:
		res.Action = "up to date"
		if dryRun || v.sess.String() == l.sy.Commit {
			return res, nil
		}
	case TakeRemote:
		res.Events = sd.remoteLines - l.sy.LogLines
		if dryRun {
			res.Action = "would pull"
			if !sd.LocalExists {
				res.Action = "new"
				res.Session = l.remoteSession(v)
			}
			return res, nil
		}
		res.Action = "pulled"
	}
	rec, err := l.takeRemote(ctx, v, sd)
	if err != nil {
		return nil, err
	}
	if rec.Worktree != nil && rec.Worktree.Valid {
		res.Worktree = rec.Worktree.Path
	}
	l.dropFencedClaim(v)
	res.Commit = v.sess.String()
	return res, l.save()
}

// dropFencedClaim forgets a claim this machine held that the remote no
// longer has: the pulled state is the newer one.
func (l *link) dropFencedClaim(v view) {
	if l.sy.ClaimHash != hashString(v.owner) {
		l.sy.Claim = nil
		l.sy.ClaimHash = hashString(v.owner)
	}
	l.sy.RemoteClaim = v.claim
}

// replaceable allows pull --replace of a diverged session only when a
// local fork keeps every event of the local copy.
func (l *link) replaceable() error {
	last, _, err := state.LastEvent(l.s.home.LogPath(l.id))
	if err != nil {
		return err
	}
	all, err := l.s.home.ListSessions()
	if err != nil {
		return err
	}
	for _, s := range all {
		// A fork made after the last local event holds the whole conversation.
		if s.ParentID == l.id && !s.CreatedAt.Before(last.Time()) {
			return nil
		}
	}
	return fmt.Errorf("%w: session %s: --replace would drop this machine's events after the last pull; keep them first with kandev fork %s", ErrDiverged, l.id, l.id)
}

// PullAll pulls every session on the remote of the clone the command runs
// in (or --remote); with dryRun it only says what it would do, listing
// the sessions that exist only there.
func PullAll(ctx context.Context, e Env, dryRun bool) (_ []*Result, failed []error, _ error) {
	e, s, err := e.fill()
	if err != nil {
		return nil, nil, err
	}
	url, err := resolveURL(e.Config, nil, nil, e.Opt.Dir, e.Opt.Remote)
	if err != nil {
		return nil, nil, err
	}
	w := s.wire(url)
	refs, err := w.refs(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	want := map[plumbing.ReferenceName]plumbing.Hash{}
	var haves []plumbing.Hash
	for name, h := range refs {
		id, ok := strings.CutPrefix(name.String(), refsPrefix+"sessions/")
		if !ok || state.ValidateID(id) != nil {
			continue
		}
		sy, _ := s.readSynced(id)
		if sy != nil && sy.URL == WithoutSecret(url) && sy.Commit == h.String() {
			continue // nothing new
		}
		ids = append(ids, id)
		want[name] = h
		if o := refs[ownerRef(id)]; !o.IsZero() {
			want[ownerRef(id)] = o
		}
		if sy != nil && sy.Commit != "" {
			haves = append(haves, plumbing.NewHash(sy.Commit))
		}
	}
	sort.Strings(ids)
	// One fetch for all of them: one round trip, one pack.
	if err := w.fetch(ctx, want, haves); err != nil {
		return nil, nil, err
	}
	// Each pull is a few fsyncs of small files: several at once overlap them.
	results := make([]*Result, len(ids))
	errs := make([]error, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(8, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				sy, _ := s.readSynced(ids[i])
				l := newLink(s, ids[i], url, sy, e.Opt)
				l.w = w
				results[i], errs[i] = l.pull(ctx, refs, dryRun, false)
			}
		})
	}
	wg.Wait()
	var out []*Result
	var only []RemoteSession
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	for _, r := range results {
		if r != nil {
			out = append(out, r)
			if r.Session != nil {
				only = append(only, *r.Session)
			}
		}
	}
	if dryRun {
		// What list shows as existing only there, until the next look.
		b, _ := json.MarshalIndent(only, "", "  ")
		if err := state.WriteFileAtomic(filepath.Join(s.dir, "remote-only.json"), append(b, '\n')); err != nil {
			return out, failed, err
		}
	}
	return out, failed, nil
}

func (l *link) remoteSession(v view) *RemoteSession {
	l.s.objMu.Lock()
	snap, err := l.s.readSnapshot(v.sess)
	l.s.objMu.Unlock()
	if err != nil {
		return nil
	}
	var rec state.Session
	if json.Unmarshal(snap.Record, &rec) != nil {
		return nil
	}
	rec = history.RedactSession(rec)
	return &RemoteSession{ID: l.id, Title: rec.Title, Agent: rec.Agent, Workspace: rec.Workspace, State: rec.State, LastActivityAt: rec.LastActivityAt, Remote: l.shown}
}

// RemoteOnly lists the sessions the last pull --all --dry-run found only
// on the remote and that this machine still does not have (no network).
func RemoteOnly(h *state.Home) []RemoteSession {
	b, err := os.ReadFile(filepath.Join(h.Dir, "sync", "remote-only.json"))
	if err != nil {
		return nil
	}
	var all, out []RemoteSession
	if json.Unmarshal(b, &all) != nil {
		return nil
	}
	for _, r := range all {
		if _, err := os.Stat(h.RecordPath(r.ID)); errors.Is(err, os.ErrNotExist) {
			out = append(out, r)
		}
	}
	return out
}

// isNew: this machine has no file of session id.
func (s *store) isNew(id string) bool {
	for _, p := range []string{s.home.RecordPath(id), s.home.LogPath(id), s.syncPath(id)} {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}
