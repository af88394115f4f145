package agentswitch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
)

// Report is what a switch did.
type Report struct {
	From string `json:"from"`
	// Interrupted is a turn cut off before the switch: it is not continued
	// on the new agent by itself (its continuation pauses), a prompt carries on.
	Interrupted string `json:"interrupted_turn,omitempty"`
	SessionID   string `json:"session_id"`
	// Setup is the setup carried over: the new agent applies what it offers
	// of it when it starts, and names what it does not.
	Setup *state.Setup `json:"setup,omitempty"`
	// Switched is false when the session runs To already (nothing logged).
	Switched bool   `json:"switched"`
	To       string `json:"to"`
}

// Request is a switch to make.
type Request struct {
	Home      *state.Home
	Config    *config.Config
	SessionID string
	To        string
	// Warn receives what the person should know that is no error (a
	// remote that did not answer); may be nil.
	Warn func(string)
}

// FactsOf are the facts of a switch of record s to agent to, as seen now.
func FactsOf(h *state.Home, cfg *config.Config, s *state.Session, to string) Facts {
	f := Facts{SessionID: s.ID, From: s.Agent, To: to, Agents: Agents(cfg), State: s.State}
	alive, _ := h.OwnerAlive(s.ID)
	turn := s.CurrentTurn != "" && !turnEnded(h.LogPath(s.ID), s.CurrentTurn)
	f.Running = alive && (turn || s.PermissionPending || h.PendingInputs(s) > 0)
	return f
}

// turnEnded reports whether the log at path holds the end of turn: a
// live owner appends it just before it clears the record's turn, and a
// switch asked for right after the turn is no switch mid-turn.
func turnEnded(path, turn string) bool {
	ended := false
	_, _ = eventlog.ScanEventsBackward(path, func(e eventlog.Event, _ []byte) bool {
		if e.TurnID != turn {
			return true
		}
		// The turn's last line: its end, or the state written with it.
		ended = e.Type == eventlog.EventTurnEnded || e.Type == eventlog.EventState && e.State == state.StateWaitingForInput
		return false
	})
	return ended
}

// settleEndedTurn waits, briefly, for a live owner to clear from the
// record a turn its log says ended, so that the warm owner can be closed.
// It wakes on the record's changes (internal/watch).
func settleEndedTurn(ctx context.Context, h *state.Home, id string) {
	changes := watch.WatchFiles(h.RecordPath(id))
	defer changes.Close()
	deadline := time.Now().Add(settleWait)
	for {
		s, err := h.LoadSession(id)
		if alive, _ := h.OwnerAlive(id); err != nil || !alive || s.CurrentTurn == "" || !turnEnded(h.LogPath(id), s.CurrentTurn) {
			return
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return
		}
		_ = changes.Wait(ctx, min(left, 100*time.Millisecond))
	}
}

// settleWait bounds settleEndedTurn: the record follows the log's end of
// a turn by one write.
const settleWait = 2 * time.Second

// Check decides a switch of session id from what is known before its owner
// lock is taken: the refusal, or whether there is anything to do.
func Check(h *state.Home, cfg *config.Config, id, to string) (Verdict, error) {
	s, err := h.LoadSession(id)
	if err != nil {
		return "", err
	}
	f := FactsOf(h, cfg, s, to)
	v := Decide(f)
	return v, Refusal(f, v)
}

// Switch moves the session to agent req.To. A warm owner that keeps the
// old agent idle is closed first, the way kandev close does; one that runs
// a turn is refused. A turn its owner died in is repaired first. A session
// that travels between machines is claimed for the switch and pushed with it.
func Switch(ctx context.Context, req Request) (*Report, error) {
	h, id := req.Home, req.SessionID
	settleEndedTurn(ctx, h, id)
	if err := owner.CloseIdleWarm(ctx, h, id); err != nil {
		return nil, err
	}
	repaired, err := surgery.Repair(h, id, eventlog.StopShutdown, false)
	if err != nil {
		return nil, busy(h, req, err)
	}
	held, err := h.Hold(id, history.LogOptions)
	if err != nil {
		return nil, busy(h, req, err)
	}
	defer held.Release()
	claim, err := remote.ClaimTurns(ctx, h, req.Config, id, func() {})
	if errors.Is(err, remote.ErrTimeout) {
		warn(req, "session "+id+": sync skipped, the switch is made on this machine's copy (kandev push "+id+" once the remote answers): "+err.Error())
		claim, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	rep, err := switchLocked(ctx, req, held)
	if rep != nil && rep.Switched {
		rep.Interrupted = repaired.Pending
	}
	rerr := claim.Release(context.WithoutCancel(ctx))
	if fenced := claim.Fenced(); fenced != nil {
		return nil, fenced
	}
	if rerr != nil {
		warn(req, "session "+id+": "+rerr.Error())
	}
	return rep, err
}

// switchLocked is the switch under the owner lock (and the claim): the
// record (read again, as the claim may have brought a newer one) names the
// new agent first, then the log says so.
func switchLocked(ctx context.Context, req Request, held *state.Held) (*Report, error) {
	h, id := req.Home, req.SessionID
	s, err := h.LoadSession(id) // under the lock held holds
	if err != nil {
		return nil, err
	}
	f := Facts{SessionID: id, From: s.Agent, To: req.To, Agents: Agents(req.Config), State: s.State, Running: s.CurrentTurn != ""}
	v := Decide(f)
	rep := &Report{SessionID: id, From: s.Agent, To: req.To, Setup: s.Setup}
	if v == Same {
		return rep, nil
	}
	if err := Refusal(f, v); err != nil {
		return nil, err
	}
	log, _, err := held.Log()
	if err != nil {
		return nil, err
	}
	// A rewind or a switch a crash left half-written is finished first, in its order.
	if err := owner.FinishPending(h, log, s); err != nil {
		return nil, err
	}
	if s, err = held.Update(func(s *state.Session) error { s.BeginSwitch(req.To); return nil }); err != nil {
		return nil, err
	}
	failpoint.Wait(ctx, failpoint.AgentSwitchRecorded)
	if err := owner.FinishSwitch(h, log, s); err != nil {
		return nil, err
	}
	rep.Switched = true
	return rep, nil
}

// busy says what to do when another process owns the session: it runs a
// turn (an idle warm owner was closed before).
func busy(h *state.Home, req Request, err error) error {
	if !errors.Is(err, state.ErrOwnerBusy) {
		return err
	}
	f := Facts{SessionID: req.SessionID, To: req.To, Running: true}
	if s, lerr := h.LoadSession(req.SessionID); lerr == nil {
		f.From, f.State = s.Agent, s.State
	}
	return Refusal(f, Busy)
}

func warn(req Request, msg string) {
	if req.Warn != nil {
		req.Warn(msg)
	}
}

// Describe is the one line that says what a switch did, for a person.
func Describe(r *Report) string {
	if !r.Switched {
		return fmt.Sprintf("session %s runs agent %s already: nothing to switch", r.SessionID, r.To)
	}
	return fmt.Sprintf("switched session %s from agent %s to %s: the next turn starts %s with the conversation so far, in the same worktree", r.SessionID, r.From, r.To, r.To)
}
