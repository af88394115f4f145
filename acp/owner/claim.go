package owner

import (
	"context"
	"errors"
	"time"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
)

// claimNext takes the claim before a warm owner's next turn: again when it
// held one, and for the first time when its session started travelling
// while it lingered (a push). A claim that brought another machine's turns
// (remote.ErrMovedOn) ends this owner: its agent does not know them.
func (o *owner) claimNext(ctx context.Context) error {
	var err error
	if o.claim != nil {
		err = o.claim.Busy(ctx)
	} else {
		var c *remote.Turns
		c, err = remote.ClaimWarm(ctx, o.job.Home, o.job.Config, o.job.SessionID, o.onLost)
		if c != nil {
			o.claim = c // released when the owner ends
		}
	}
	if errors.Is(err, remote.ErrMovedOn) {
		o.reopenLog() // the log grew under this owner: its next seq moved on
	}
	return err
}

// logAgentExit logs the agent's exit, unless the session travels and this
// owner holds no claim (a warm owner idle, or refused its next claim): a
// line only this machine needs would then make its log diverge from the
// one another machine appends to meanwhile. The record says the agent is
// gone all the same.
func (o *owner) logAgentExit(e *eventlog.Event) {
	if o.offline || o.claim.Holding() || !remote.Travels(o.job.Home, o.job.Config, o.job.SessionID) {
		o.orphanChildren("The agent stopped while this child ran: its work may or may not have been done.", o.currentTurn()) // children.go
		o.append(true, e)
	}
}

// ranOffline says in the log (and on the terminal) that this owner's turns
// run without the claim, on this machine's copy (--offline).
func (o *owner) ranOffline() {
	id := o.job.SessionID
	msg := "The remote did not answer: with --offline this owner runs on this machine's copy without the claim. kandev push " + id + " sends it once the remote answers; if another machine ran the session meanwhile, the push is refused as diverged and kandev fork " + id + " keeps this copy."
	o.marker(history.MarkerRanOffline, msg, "")
	o.warn("session " + id + ": the remote did not answer; --offline: the turn runs on this machine's copy, without the claim")
}

// awaitClaimGivenUp waits, once the turn a command followed has ended, for
// its owner to give up the claim on a travelling session (a warm owner does
// as soon as it is idle, pushing the turn): the command returns when
// another machine may run the session, so none is told the claim is held
// by a turn that is over. It stops waiting when the owner has more to
// serve (it keeps the claim), is gone, or after the remote's timeout.
func awaitClaimGivenUp(ctx context.Context, job Job) {
	h, id := job.Home, job.SessionID
	if !remote.Holding(h, id) {
		return
	}
	changes := watch.WatchFiles(remote.SyncPath(h, id))
	defer changes.Close()
	wait := config.DefaultSyncTimeoutSeconds * time.Second
	if job.Config != nil {
		wait = job.Config.SyncTimeout()
	}
	deadline := time.Now().Add(wait)
	for remote.Holding(h, id) && !inboxPending(h, id) && time.Now().Before(deadline) {
		if alive, _ := h.OwnerAlive(id); !alive {
			return
		}
		if changes.Wait(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
}

// releaseClaim gives up the claim on a travelling session, pushing what
// this owner appended. A takeover is the command's error (exit 3); a
// failed release is only a warning: the claim expires by itself.
func releaseClaim(ctx context.Context, claim *remote.Turns, job Job, err error) error {
	rerr := claim.Release(ctx)
	if fenced := claim.Fenced(); fenced != nil {
		return fenced
	}
	if rerr != nil && job.Warn != nil {
		job.Warn("session " + job.SessionID + ": " + rerr.Error())
	}
	return err
}

// withdrawRefused takes back the prompt the command that follows it queued
// (job.OwnInput) when its turn is refused for want of the claim: the
// command says no turn runs, so no later owner may serve it (the next
// command's --offline owner did, the same turn twice once the person sent
// it again as told). A detached owner leaves it: its follower, which
// reports the refusal, takes over and withdraws it. The caller holds the
// owner lock, so no owner serves the inbox meanwhile.
func withdrawRefused(job Job) {
	if job.Detached || job.OwnInput == "" {
		return
	}
	s, err := job.Home.LoadSession(job.SessionID)
	if err != nil {
		return
	}
	ins, err := job.Home.ReadInbox(job.SessionID, s.InboxOffset) // not yet served
	if err != nil {
		return
	}
	for _, in := range ins {
		if in.ID == job.OwnInput && in.Kind == state.InputPrompt {
			_ = job.Home.WithdrawInput(job.SessionID, in)
			return
		}
	}
}
