package owner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/state"
)

// linger keeps the agent warm after the last turn: inputs that arrive are
// served at once, and after job.Linger without one, or on a close input, it
// returns and the owner shuts the agent down. The record's warm_until says
// until when, for status.
func (o *owner) linger(ctx context.Context) error {
	if o.job.Linger <= 0 {
		return nil
	}
	defer o.closeAgentSession(ctx) // the warm owner ends (its linger ran out, kandev close)
	if o.closing {
		return nil
	}
	changes := watch.WatchFiles(o.job.Home.InboxPath(o.job.SessionID))
	defer changes.Close()
	defer o.update(func(s *state.Session) { s.WarmUntil = nil })
	// The wait also ends when the agent dies: a warm owner whose agent is
	// gone exits at once, so the next prompt restores it.
	wake, stop := context.WithCancel(ctx)
	defer stop()
	if o.proc != nil {
		go func() {
			select {
			case <-o.proc.Done():
				stop()
			case <-wake.Done():
			}
		}()
	}
	for joined := false; ; joined = true {
		if o.job.Linger <= 0 {
			return nil // a served prompt's --linger 0
		}
		until := o.now().Add(o.job.Linger)
		if joined {
			o.update(func(s *state.Session) { s.WarmUntil = &until })
		} else {
			o.joinWarmPool(until) // at most max_warm owners linger in a home
		}
		if err := o.claim.Idle(ctx); err != nil {
			return nil // the claim was lost: this owner stops; the next one claims again
		}
		for !o.inboxWaiting() {
			if !o.agentAlive() {
				o.agentGone()
				return nil
			}
			left := until.Sub(o.now())
			if left <= 0 || ctx.Err() != nil {
				return nil
			}
			_ = changes.Wait(wake, left)
		}
		if err := o.claimNext(ctx); err != nil {
			// Another machine ran it, holds it, or the remote is silent:
			// the inputs wait for a new owner, which says why.
			return nil
		}
		if err := o.serveInbox(ctx); err != nil || o.closing || !o.agentAlive() {
			return err
		}
	}
}

// closeTimeout bounds the agent's answer to session/close: the owner stops
// the agent next either way.
const closeTimeout = 2 * time.Second

// closeAgentSession tells an agent that advertises session/close that the
// warm owner is done with the session, before it stops the agent; nothing
// is sent to an agent that is gone or when the owner is being stopped
// (ctx ended: a signal). A refusal changes nothing: the agent is stopped
// next, and the session stays resumable from kandev's log and the agent's
// own files.
func (o *owner) closeAgentSession(ctx context.Context) {
	if ctx.Err() != nil || o.conn == nil || o.agentCaps.SessionCapabilities.Close == nil || !o.agentAlive() {
		return
	}
	token := o.session().ResumeToken
	if token == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	_ = o.conn.CloseSession(cctx, token)
}

// inboxWaiting reports whether anything is queued past the served offset.
func (o *owner) inboxWaiting() bool {
	s := o.session()
	ins, _ := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	return len(ins) > 0
}

// awaitAnswer parks permission request rid until a kandev approve or deny
// that names it answers through the inbox, the turn is cancelled, or the
// defer timeout passes; it returns the mode that decides the answer and
// what gave it (the answer's input id, AnsweredByTimeout or
// AnsweredByCancel).
func (o *owner) awaitAnswer(ctx context.Context, rid string, asker *state.Asker) (mode, by string) {
	in, by := o.awaitInput(ctx, rid, asker, state.InputApprove, state.InputDeny)
	switch {
	case in == nil:
		return PermDenyAll, by
	case in.Kind == state.InputDeny:
		return PermDenyAll, in.ID
	case in.Always:
		return permApproveAlways, in.ID
	}
	return PermApproveAll, in.ID
}

// awaitInput waits for the first input of kinds queued for request rid
// (nil, and why, when the turn's cancel, the asker's exit or the defer
// timeout ends the wait).
func (o *owner) awaitInput(ctx context.Context, rid string, asker *state.Asker, kinds ...string) (*state.Input, string) {
	changes := watch.WatchFiles(o.job.Home.InboxPath(o.session().ID))
	defer changes.Close()
	timeout := time.Duration(o.job.Config.DeferTimeoutSeconds()) * time.Second
	deadline := time.Now().Add(timeout)
	for {
		if in := o.answerQueued(rid, kinds); in != nil {
			return in, in.ID
		}
		if ctx.Err() != nil || o.cancelled.Load() {
			return nil, AnsweredByCancel
		}
		if asker != nil && !asker.Alive() {
			if in := o.answerQueued(rid, kinds); in != nil {
				return in, in.ID // its last act may have been the answer
			}
			return nil, AnsweredByAskerGone
		}
		left := time.Until(deadline)
		if left <= 0 {
			o.marker(history.MarkerPermissionTimeout, fmt.Sprintf("Nobody answered request %s within %s; it was denied.", rid, timeout), "")
			return nil, AnsweredByTimeout
		}
		// Short waits: a cancel is seen by the turn's own loop, not the inbox watch.
		_ = changes.Wait(ctx, min(left, 100*time.Millisecond))
	}
}

// answerQueued takes the first input of kinds queued for request rid and
// not yet taken. Answers for other requests are left alone: each answer
// applies to the request it names, or to none.
func (o *owner) answerQueued(rid string, kinds []string) *state.Input {
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.answered == nil {
		o.answered = map[string]bool{}
	}
	for i := range ins {
		in := &ins[i]
		if o.answered[in.ID] || in.RequestID != rid || !slices.Contains(kinds, in.Kind) {
			continue
		}
		o.answered[in.ID] = true
		return in
	}
	return nil
}

// answerWait bounds how long kandev approve and deny wait for the owner.
const answerWait = 30 * time.Second

// Resolution is how a parked permission request was answered.
type Resolution struct {
	RequestID  string
	Allowed    bool
	AnsweredBy string // the approve or deny input, AnsweredByTimeout or AnsweredByCancel
}

// dialAnswer queues answer r.Answer for the live owner of job's session
// and follows the log until that owner has resolved the request it names
// (awaitResolution). With no live owner nothing holds the request: the
// answer is not queued.
func dialAnswer(ctx context.Context, job Job, r Request) (*Resolution, error) {
	h, id, rid := job.Home, job.SessionID, r.Answer.RequestID
	alive, _ := h.OwnerAlive(id)
	if DecideReach(ReachFacts{Follows: FollowsAnswer, OwnerAlive: alive}) != ReachJoin {
		return nil, fmt.Errorf("%w: the owner of session %s exited before it answered request %s", state.ErrNotFound, id, rid)
	}
	if err := h.Enqueue(id, r.Answer); err != nil {
		return nil, err
	}
	return awaitResolution(ctx, h, id, r.AnswerFrom, rid)
}

// awaitResolution follows session id's log from offset from until request
// rid is resolved, and says how. The owner exiting first is an error: the
// request was never answered.
func awaitResolution(ctx context.Context, h *state.Home, id string, from int64, rid string) (*Resolution, error) {
	var res *Resolution
	see := func(e eventlog.Event) bool {
		if e.Type != eventlog.EventPermissionResolved || e.RequestID != rid {
			return true
		}
		var d struct {
			Allowed    bool   `json:"allowed"`
			AnsweredBy string `json:"answered_by"`
		}
		_ = json.Unmarshal(e.Data, &d)
		res = &Resolution{RequestID: rid, Allowed: d.Allowed, AnsweredBy: d.AnsweredBy}
		return false
	}
	// The answer may be logged before from while the record still lists the
	// request (it stops listing it just after): look back as far as the
	// request itself first.
	_, _ = eventlog.ScanBackward(h.LogPath(id), func(_ int64, line []byte) bool {
		e, ok := eventlog.DecodeEvent(line)
		if !ok {
			return true
		}
		if e.Type == eventlog.EventPermissionRequest && e.RequestID == rid {
			return false
		}
		return see(e)
	})
	if res != nil {
		return res, nil
	}
	// The owner takes an answer within moments; one that has not after
	// answerWait is reported, never taken for done.
	deadline := time.Now().Add(answerWait)
	_, err := eventlog.Follow(ctx, h.LogPath(id), from, see, func() bool {
		alive, _ := h.OwnerAlive(id)
		return !alive || time.Now().After(deadline)
	})
	if res != nil {
		return res, nil
	}
	if alive, _ := h.OwnerAlive(id); alive && err == nil && ctx.Err() == nil {
		return nil, fmt.Errorf("the owner of session %s has not taken the answer to request %s within %s; see kandev status %s", id, rid, answerWait, id)
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w: stopped waiting for the owner of %s to take the answer", ErrInterrupted, id)
	}
	if err == nil {
		err = fmt.Errorf("%w: the owner of session %s exited before it answered request %s", state.ErrNotFound, id, rid)
	}
	return nil, err
}

// reopenLog opens the log again after a pull appended to it, so what this
// owner appends next follows the pulled events.
func (o *owner) reopenLog() {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	log, _, err := o.job.Home.OpenLog(o.job.SessionID, eventlog.OpenLogOptions{Redact: history.RedactEvent})
	if err != nil {
		o.failWrite("the log of session "+o.job.SessionID, err)
		return
	}
	o.log.Close()
	o.log = log
}
