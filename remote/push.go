package remote

import (
	"context"
	"errors"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/state"
)

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
	if errors.Is(err, errStale) {
		err = l.staleOrLocked(err)
	}
	return res, err
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
			return nil, l.diverged()
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
		if !errors.Is(err, errNeedObjects) || i == fetchRounds-1 {
			break
		}
		if err := roundPause(ctx, i); err != nil {
			return nil, err
		}
		if _, err := l.look(ctx, nil); err != nil { // fetches them
			return nil, err
		}
	}
	if err != nil {
		if holding && errors.Is(err, errStale) {
			return nil, l.fenced(ctx)
		}
		return nil, l.keepSeen(err)
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
	v.claim = l.bounded(v.claim, v.owner, now)
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

// fenced reads who took the claim over, for the error. The look has its
// own time (the wire's deadline bounds it): the renewal that found the
// takeover may have spent its own, as it does when this process was
// frozen.
func (l *link) fenced(ctx context.Context) error {
	v, err := l.look(context.WithoutCancel(ctx), nil)
	if err != nil {
		return l.fencedBy(nil)
	}
	return l.fencedBy(v.claim)
}
