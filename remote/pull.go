package remote

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/state"
)

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
	release, err := l.lockForPull(ctx, dryRun)
	if err != nil {
		return nil, err
	}
	defer release()
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
		if sd, err = l.dropLocal(v, dryRun); err != nil {
			return nil, err
		}
	}
	switch sd.step {
	case Diverged:
		return nil, l.diverged()
	case SendLocal:
		res.Action = "ahead"
		return res, l.seenNoNewer(v, dryRun)
	case UpToDate:
		res.Action = "up to date"
		if dryRun || v.sess.String() == l.sy.Commit {
			return res, l.seenNoNewer(v, dryRun)
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
	res.describePulled(rec)
	l.dropFencedClaim(v)
	res.Commit = v.sess.String()
	return res, l.save()
}

// lockForPull takes the session's sync lock and (unless dryRun) its owner
// lock: refused while a kandev process here owns the session. A session
// this machine has never seen has no owner and no other sync here (nothing
// can name it before its record exists, which is written after its log):
// the locks, two file creations each, are for the others.
func (l *link) lockForPull(ctx context.Context, dryRun bool) (release func(), err error) {
	if l.s.isNew(l.id) {
		return func() {}, nil
	}
	unlock, err := l.s.lock(ctx, l.id)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return unlock, nil
	}
	own, err := l.s.home.AcquireOwner(l.id)
	if err != nil {
		unlock()
		return nil, err // a live owner here: its turn first
	}
	return func() { own.Release(); unlock() }, nil
}

// dropLocal is pull --replace of a diverged session: once a fork keeps
// every local event (replaceable), the local log goes and the remote's is
// taken whole; the sides are compared again.
func (l *link) dropLocal(v view, dryRun bool) (sides, error) {
	if err := l.replaceable(); err != nil {
		return sides{}, err
	}
	if !dryRun {
		if err := os.Remove(l.s.home.LogPath(l.id)); err != nil {
			return sides{}, err
		}
	}
	l.sy = &Synced{URL: l.shown}
	return l.compare(v)
}

// describePulled fills in what the pulled record says: where its worktree
// maps, a cwd outside the clone, MCP servers that wait for trust.
func (res *Result) describePulled(rec *state.Session) {
	if rec.Worktree != nil && rec.Worktree.Valid {
		res.Worktree = rec.Worktree.Path
	}
	res.PulledCwd = rec.PulledCwd
	if rec.TrustPending {
		res.TrustPending = true
		for _, m := range rec.MCPConfig {
			res.Servers = append(res.Servers, m.Name)
		}
	}
}

// seenNoNewer: the remote has nothing of the session this machine lacks,
// so a claim it held that the remote no longer has (taken over, perhaps by
// a later command of this machine whose answer was lost) fences it no
// more: the next push goes on from here. Before, such a machine was
// refused every push ("taken over") and every pull found nothing to take.
func (l *link) seenNoNewer(v view, dryRun bool) error {
	if dryRun || l.sy.Claim == nil || l.sy.ClaimHash == hashString(v.owner) {
		return nil
	}
	l.dropFencedClaim(v)
	return l.save()
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

// isNew: this machine has no file of session id.
func (s *store) isNew(id string) bool {
	for _, p := range []string{s.home.RecordPath(id), s.home.LogPath(id), s.syncPath(id)} {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}
