package acp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
)

// linger keeps the agent warm after the last turn: inputs that arrive are
// served at once, and after job.Linger without one, or on a close input, it
// returns and the owner shuts the agent down. The record's warm_until says
// until when, for status.
func (o *owner) linger(ctx context.Context) error {
	if o.job.Linger <= 0 || o.closing {
		return nil
	}
	changes := state.WatchFiles(o.job.Home.InboxPath(o.job.SessionID))
	defer changes.Close()
	defer o.update(func(s *state.Session) { s.WarmUntil = nil })
	for {
		until := o.now().Add(o.job.Linger)
		o.update(func(s *state.Session) { s.WarmUntil = &until })
		if err := o.claim.Idle(ctx); err != nil {
			return nil // the claim was lost: this owner stops; the next one claims again
		}
		for !o.inboxWaiting() {
			left := until.Sub(o.now())
			if left <= 0 || ctx.Err() != nil {
				return nil
			}
			_ = changes.Wait(ctx, left)
		}
		if err := o.claim.Busy(ctx); err != nil {
			if errors.Is(err, remote.ErrMovedOn) {
				o.reopenLog() // the log grew under this owner: its next seq moved on
			}
			return nil // another machine ran it: the inputs wait for a new owner
		}
		if err := o.serveInbox(ctx); err != nil || o.closing {
			return err
		}
	}
}

// inboxWaiting reports whether anything is queued past the served offset.
func (o *owner) inboxWaiting() bool {
	s := o.session()
	ins, _ := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	return len(ins) > 0
}

// awaitAnswer parks a permission request until kandev approve or deny
// answers it through the inbox, the turn is cancelled, or the defer timeout
// passes; it returns the mode that decides the answer.
func (o *owner) awaitAnswer(ctx context.Context) string {
	changes := state.WatchFiles(o.job.Home.InboxPath(o.session().ID))
	defer changes.Close()
	timeout := time.Duration(o.job.Config.DeferTimeoutSeconds()) * time.Second
	deadline := time.Now().Add(timeout)
	for {
		if mode := o.answerQueued(); mode != "" {
			return mode
		}
		if ctx.Err() != nil || o.cancelled.Load() {
			return PermDenyAll
		}
		left := time.Until(deadline)
		if left <= 0 {
			o.marker(history.MarkerPermissionTimeout, fmt.Sprintf("Nobody answered the permission request within %s; it was denied.", timeout), "")
			return PermDenyAll
		}
		// Short waits: a cancel is seen by the turn's own loop, not the inbox watch.
		_ = changes.Wait(ctx, min(left, 100*time.Millisecond))
	}
}

// answerQueued takes the first approve or deny queued and not yet taken.
func (o *owner) answerQueued() string {
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.answered == nil {
		o.answered = map[string]bool{}
	}
	for _, in := range ins {
		if o.answered[in.ID] || (in.Kind != state.InputApprove && in.Kind != state.InputDeny) {
			continue
		}
		o.answered[in.ID] = true
		switch {
		case in.Kind == state.InputDeny:
			return PermDenyAll
		case in.Always:
			return permApproveAlways
		}
		return PermApproveAll
	}
	return ""
}

// reopenLog opens the log again after a pull appended to it, so what this
// owner appends next follows the pulled events.
func (o *owner) reopenLog() {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	log, _, err := o.job.Home.OpenLog(o.job.SessionID, state.OpenLogOptions{Redact: history.RedactEvent})
	if err != nil {
		o.failWrite("the log of session "+o.job.SessionID, err)
		return
	}
	o.log.Close()
	o.log = log
}
