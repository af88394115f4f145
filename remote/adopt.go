package remote

import (
	"context"
	"os"
)

// adoptOwn handles a compare-and-swap of the claim that failed because the
// remote no longer holds the claim this machine wrote down: if what it
// holds is this process's own claim of the same generation (a renewal that
// reached the remote while its answer was lost, its time having run out on
// a loaded machine), that claim is written down as held and true is
// returned; the caller goes on holding it. Nobody else writes this machine's
// name, this process's pid and this generation, so it is no takeover.
func (l *link) adoptOwn(ctx context.Context) bool {
	held, _ := l.held()
	if held == nil {
		return false
	}
	v, err := l.look(context.WithoutCancel(ctx), nil)
	if err != nil || v.claim == nil {
		return false
	}
	c := *v.claim
	if c.Released || c.Machine != held.Machine || c.PID != os.Getpid() || c.Generation != held.Generation {
		return false
	}
	l.setClaim(claimUpdate{up: refUpdate{Name: ownerRef(l.id), New: v.owner}, claim: c})
	return l.save() == nil
}
