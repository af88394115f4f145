package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/state"
)

// Turns is an owner's claim on a synced session: taken before its turns
// run (Busy), renewed while they run, given up when it is idle or done
// (Idle, Release), each time together with a push of what the turns
// appended, so the next machine to claim it continues from there. A nil
// *Turns (a session that never synced, with [sync] auto off) does nothing.
type Turns struct {
	l      *link
	auto   bool
	onLost func() // the claim was taken over: the owner stops

	// warm: made for an owner whose agent already runs (ClaimWarm): a
	// claim that brings another machine's turns is ErrMovedOn.
	warm bool

	mu      sync.Mutex // Busy, TurnEnded, Idle, Release
	holding bool
	// opMu orders the renewer's use of the link with the others' (the
	// renewer never takes mu: giveUp waits for it while holding mu).
	opMu   sync.Mutex
	stop   chan struct{}
	done   chan struct{}
	fenced atomic.Pointer[FencedError]
}

// errNeedObjects: a decision needs objects the store does not hold yet.
var errNeedObjects = errors.New("objects to fetch first")

// fetchRounds bounds how often a push whose decision needs objects another
// machine pushed meanwhile fetches them and decides again. A round is lost
// only to a push that landed during it, so the rounds pause a little longer
// each time (roundPause): two machines racing for a claim, each fetching
// while the other pushes, could otherwise lose three rounds in a row on a
// loaded machine and report "objects to fetch first".
const fetchRounds = 8

// roundPause waits before fetch round i (none before the first).
func roundPause(ctx context.Context, i int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(i) * 30 * time.Millisecond):
		return nil
	}
}

// ErrMovedOn: while a warm owner was idle, another machine ran the
// session; its log and record now have those turns (the claim is held),
// but this owner's agent does not: the owner must end.
var ErrMovedOn = errors.New("the session ran on another machine meanwhile")

// Busy takes the claim before a turn (again, after Idle).
func (t *Turns) Busy(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holding {
		return nil
	}
	first := t.stop == nil && !t.warm
	t.opMu.Lock()
	err := retryStale(func() error { return t.claim(ctx, first) })
	t.opMu.Unlock()
	if errors.Is(err, errStale) {
		err = t.l.staleOrLocked(fmt.Errorf("%w: session %s is being claimed by another machine at this moment; try again", ErrClaimHeld, t.l.id))
	}
	if err != nil && !errors.Is(err, ErrMovedOn) {
		return err
	}
	t.holding = true
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	go t.renew(t.stop, t.done)
	return err
}

func (t *Turns) claim(ctx context.Context, first bool) error {
	l := t.l
	unlock, err := l.s.lock(ctx, l.id)
	if err != nil {
		return err
	}
	defer unlock()
	if sy, err := l.s.readSynced(l.id); err == nil && sy != nil && sy.URL == l.shown {
		l.sy = sy
	}
	// One connection: the refs the push session opens with decide the claim.
	var v view
	var cu claimUpdate
	if err := l.pushFetching(ctx, l.claimDecision(&v, &cu)); err != nil {
		return l.keepSeen(err) // a fetch's error passes through keepSeen unchanged
	}
	l.setClaim(cu)
	v.owner, v.claim = cu.up.New, &cu.claim
	// Written down before anything that can fail: a failure after this
	// point releases the claim (releaseLocked reads it from the sync file).
	if err := l.s.writeSynced(l.id, l.sy); err != nil {
		return errors.Join(err, l.releaseAfterFailure(ctx))
	}
	return l.catchUp(ctx, v, first)
}

// claimDecision is the decision a claim's push makes from the remote's
// refs: the claim to write (into *cu), or why none may be (another
// machine's live claim); *v is the remote's side as the refs show it.
func (l *link) claimDecision(v *view, cu *claimUpdate) func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error) {
	return func(refs map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error) {
		*v = view{sess: refs[sessionRef(l.id)], owner: refs[ownerRef(l.id)]}
		if !v.owner.IsZero() {
			if !l.s.has(v.owner) {
				return nil, errNeedObjects // another machine's claim: read it first
			}
			var err error
			if v.claim, err = l.s.readClaim(v.owner); err != nil {
				return nil, err
			}
		}
		now := l.opt.now()
		held, heldHash := l.held()
		v.claim = l.bounded(v.claim, v.owner, now)
		verdict := DecideClaim(ClaimInput{Current: v.claim, CurrentHash: hashString(v.owner), HeldHash: heldHash, Held: held, Machine: l.opt.Machine, Now: now})
		if verdict == ClaimRefused {
			return nil, &ClaimHeldError{ID: l.id, Machine: v.claim.Machine, ExpiresAt: v.claim.ExpiresAt}
		}
		c := NextClaim(v.claim, l.opt.Machine, os.Getpid(), now, l.opt.TTL)
		if verdict == ClaimKeep {
			c = *held
			c.PID, c.ExpiresAt = os.Getpid(), now.Add(l.opt.TTL)
		}
		var err error
		*cu, err = l.claimUpdate(*v, c)
		return []refUpdate{cu.up}, err
	}
}

// pushFetching pushes what decide returns; a decision that needs objects
// another machine pushed meanwhile fetches them and decides again, at
// most fetchRounds times (link.push has the same loop, with its own
// handling of a failed fetch).
func (l *link) pushFetching(ctx context.Context, decide func(map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error)) error {
	for i := 0; ; i++ {
		err := l.w.pushDecided(ctx, decide)
		if !errors.Is(err, errNeedObjects) || i == fetchRounds-1 {
			return err
		}
		if err := roundPause(ctx, i); err != nil {
			return err
		}
		if _, err := l.look(ctx, nil); err != nil { // fetches them
			return err
		}
	}
}

// catchUp brings the local copy of a session just claimed (v: the remote's
// side, the claim held) up to the remote's: a divergence is refused, the
// other machine's turns are taken (ErrMovedOn for a warm owner, not
// first). Any failure releases the claim at once.
func (l *link) catchUp(ctx context.Context, v view, first bool) error {
	if !v.sess.IsZero() && !l.s.has(v.sess) {
		// Held now, so the session ref cannot move: fetch what it names.
		if err := l.w.fetch(ctx, map[plumbing.ReferenceName]plumbing.Hash{sessionRef(l.id): v.sess}, l.haves()); err != nil {
			return errors.Join(err, l.releaseAfterFailure(ctx))
		}
	}
	sd, err := l.compare(v)
	if err != nil {
		return errors.Join(err, l.releaseAfterFailure(ctx))
	}
	switch sd.step {
	case Diverged:
		err := l.diverged()
		return errors.Join(err, l.releaseAfterFailure(ctx))
	case TakeRemote:
		if _, err := l.takeRemote(ctx, v, sd); err != nil {
			return errors.Join(err, l.releaseAfterFailure(ctx))
		}
		if !first {
			// The warm agent does not know the other machine's turns: the
			// owner ends (still holding the claim, so what it logs on the
			// way out is pushed) and the next one restores from the log.
			return errors.Join(ErrMovedOn, l.save())
		}
	}
	return l.save()
}

// releaseAfterFailure gives up a claim just taken for a turn that cannot
// run: at once, so that no machine waits for it to expire. The release
// is not cut short by the command's context ending; the remote's timeout
// bounds it.
func (l *link) releaseAfterFailure(ctx context.Context) error {
	failpoint.Wait(ctx, failpoint.ClaimTakenForFailedTurn)
	return l.releaseLocked(context.WithoutCancel(ctx), nil)
}

// renew keeps the claim alive while turns run; a renewal the remote
// refuses means another machine took the claim over.
func (t *Turns) renew(stop, done chan struct{}) {
	defer close(done)
	every := max(t.l.opt.TTL/3, 100*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := t.renewOnce(ctx)
		cancel()
		if errors.Is(err, ErrFenced) {
			t.lost(err)
			return
		}
	}
}

func (t *Turns) renewOnce(ctx context.Context) error {
	t.opMu.Lock()
	defer t.opMu.Unlock()
	l := t.l
	unlock, err := l.s.lock(ctx, l.id)
	if err != nil {
		return err
	}
	defer unlock()
	if sy, err := l.s.readSynced(l.id); err == nil && sy != nil {
		l.sy = sy
	}
	held, heldHash := l.held()
	if held == nil {
		return l.fenced(ctx)
	}
	c := *held
	c.ExpiresAt = l.opt.now().Add(l.opt.TTL)
	v := view{owner: plumbing.NewHash(heldHash)}
	cu, err := l.claimUpdate(v, c)
	if err != nil {
		return err
	}
	if err := l.w.push(ctx, []refUpdate{cu.up}); err != nil {
		if errors.Is(err, errStale) {
			if l.adoptOwn(ctx) {
				return nil // renewed by the attempt whose answer was lost
			}
			return l.fenced(ctx)
		}
		return err
	}
	l.setClaim(cu)
	return l.save()
}

func (t *Turns) lost(err error) {
	var fe *FencedError
	if errors.As(err, &fe) && t.fenced.CompareAndSwap(nil, fe) && t.onLost != nil {
		t.onLost()
	}
}

// Fenced is the takeover that stopped this owner, nil if none.
func (t *Turns) Fenced() error {
	if t == nil {
		return nil
	}
	if fe := t.fenced.Load(); fe != nil {
		return fe
	}
	return nil
}

// TurnEnded pushes what the turn appended when [sync] auto is on; the
// claim is renewed in the same update.
func (t *Turns) TurnEnded(ctx context.Context) error {
	if t == nil || !t.auto {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.holding || t.Fenced() != nil {
		return t.Fenced()
	}
	err := t.withRecord(ctx, func(l *link, rec *state.Session) error {
		_, err := l.push(ctx, rec, true)
		return err
	})
	if errors.Is(err, ErrFenced) {
		t.lost(err)
	}
	return err
}

// Idle gives the claim up while a warm owner waits, pushing what its turns
// appended, so another machine may run the session meanwhile.
func (t *Turns) Idle(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.giveUp(ctx)
}

// Release gives the claim up for good when the owner exits; the error is
// the takeover that fenced it, if any.
func (t *Turns) Release(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.giveUp(ctx); err != nil {
		return err
	}
	return t.Fenced()
}

func (t *Turns) giveUp(ctx context.Context) error {
	if !t.holding {
		return nil
	}
	close(t.stop)
	<-t.done
	t.holding = false
	if t.Fenced() != nil {
		return nil
	}
	err := t.withRecord(ctx, func(l *link, rec *state.Session) error { return l.releaseLocked(ctx, rec) })
	if errors.Is(err, ErrFenced) {
		t.lost(err)
	}
	return err
}

// releaseLocked writes the released claim, with the session's new events
// when rec is given and this machine is ahead. Unredacted data is not
// pushed; the claim is released all the same.
func (l *link) releaseLocked(ctx context.Context, rec *state.Session) error {
	if sy, err := l.s.readSynced(l.id); err == nil && sy != nil && sy.URL == l.shown {
		l.sy = sy
	}
	held, heldHash := l.held()
	if held == nil {
		return nil
	}
	var cu claimUpdate
	var meta Meta
	var unredacted error
	var sent plumbing.Hash
	// One connection, as for the claim: the refs decide what is pushed.
	err := l.w.pushDecided(ctx, func(refs map[plumbing.ReferenceName]plumbing.Hash) ([]refUpdate, error) {
		v := view{sess: refs[sessionRef(l.id)], owner: refs[ownerRef(l.id)]}
		if hashString(v.owner) != heldHash {
			return nil, errStale // taken over: fenced
		}
		if !v.sess.IsZero() && !l.s.has(v.sess) {
			return nil, errNeedObjects
		}
		c := *held
		c.Released, c.ExpiresAt = true, l.opt.now()
		var err error
		if cu, err = l.claimUpdate(v, c); err != nil {
			return nil, err
		}
		ups := []refUpdate{cu.up}
		if rec == nil {
			return ups, nil
		}
		sd, err := l.compare(v)
		if err != nil || sd.step != SendLocal {
			return ups, err
		}
		su, m, err := l.sessionUpdate(v, sd, rec)
		switch {
		case errors.Is(err, ErrUnredacted):
			unredacted = err
		case err != nil:
			return nil, err
		default:
			ups, meta, sent = append(ups, su), m, su.New
		}
		return ups, nil
	})
	switch {
	case errors.Is(err, errNeedObjects):
		if _, err := l.look(ctx, nil); err != nil {
			return err
		}
		return errStale // and again
	case errors.Is(err, errStale):
		if l.adoptOwn(ctx) {
			return errStale // the claim it holds is known now: again
		}
		return l.fenced(ctx)
	case err != nil:
		return err
	}
	if !sent.IsZero() {
		l.agreed(sent, meta.LogBytes, meta.LogLines)
	}
	l.setClaim(cu)
	return errors.Join(unredacted, l.save())
}

// withRecord runs op on the session's record under the sync lock, once more
// when the remote moved meanwhile (retryStale); the caller holds t.mu.
func (t *Turns) withRecord(ctx context.Context, op func(*link, *state.Session) error) error {
	l := t.l
	t.opMu.Lock()
	defer t.opMu.Unlock()
	return retryStale(func() error {
		unlock, err := l.s.lock(ctx, l.id)
		if err != nil {
			return err
		}
		defer unlock()
		rec, err := l.s.home.LoadSession(l.id)
		if err != nil {
			return err
		}
		return op(l, rec)
	})
}
