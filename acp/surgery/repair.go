package surgery

import (
	"errors"
	"fmt"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// RepairReport says what Repair did (or would do with dry run).
type RepairReport struct {
	SessionID    string   `json:"session_id"`
	TornBytes    int64    `json:"torn_bytes"`
	Turn         string   `json:"interrupted_turn,omitempty"`
	UnknownCalls []string `json:"unknown_tool_calls"`
	// UnknownChildren are the interrupted turn's children (subagents)
	// whose outcome is unknown.
	UnknownChildren []string `json:"unknown_children"`
	Appended        int      `json:"appended_events"`
	DryRun          bool     `json:"dry_run"`
	// Pending is the interrupted turn the next resume continues (repair
	// never sends the continuation itself).
	Pending string `json:"continuation_pending,omitempty"`
}

// Repair reconciles a session after a crash without relaunching its agent:
// it truncates a torn last log line and closes an interrupted turn
// (owner.RepairTurn) with stop reason stop. It takes the owner lock, so it
// never races a live owner. Repairing twice appends nothing the second time.
func Repair(h *state.Home, id, stop string, dryRun bool) (*RepairReport, error) {
	held, err := h.Hold(id, history.LogOptions)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	s, err := h.LoadSession(id) // under the lock held holds
	if err != nil {
		return nil, err
	}
	if dryRun {
		return previewRepair(h, s, id, stop)
	}
	rep := &RepairReport{SessionID: id, UnknownCalls: []string{}, UnknownChildren: []string{}}
	log, torn, err := held.Log()
	if err != nil {
		return nil, err
	}
	before := log.NextSeq()
	if err := owner.FinishPending(h, log, s); err != nil {
		return nil, err
	}
	rep.TornBytes = torn
	// Every write below returns its error: a stop or repair that could not
	// be written must not look done (the turn would be continued later).
	var evs []*eventlog.Event
	if torn > 0 {
		m := history.NewMarker(history.MarkerSessionRepaired, fmt.Sprintf("Truncated a torn last log line (%d bytes) left by a crash.", torn), "")
		evs = append(evs, &m)
	}
	turn := s.CurrentTurn
	var tr owner.TurnRepair
	if turn != "" {
		tr = owner.RepairTurn(owner.TurnEvents(h.LogPath(id), turn), turn, stop)
		if tr.Fixes != nil {
			rep.Turn = turn
			evs = append(append(evs, tr.Fixes...), &eventlog.Event{Type: eventlog.EventState, State: state.StateWaitingForInput, TurnID: turn})
		}
		for _, c := range tr.UnknownCalls {
			rep.UnknownCalls = append(rep.UnknownCalls, c.ToolCallID)
		}
		for _, c := range tr.UnknownChildren {
			rep.UnknownChildren = append(rep.UnknownChildren, c.ID)
		}
	}
	if len(evs) > 0 {
		if err := log.AppendSync(evs...); err != nil {
			return nil, fmt.Errorf("repair %s: %w", id, err)
		}
	}
	s, err = held.Update(func(s *state.Session) error {
		if turn != "" {
			owner.ReleaseInitialPrompt(s, tr, tr.Fixes != nil && stop == eventlog.StopShutdown)
			if tr.Fixes != nil && stop == eventlog.StopShutdown && s.InitialPrompt == "" {
				// Owed its one follow-up: repair never spends it.
				s.Interrupted = &state.Interruption{Turn: turn, PermissionOpen: tr.PermissionOpen || s.PermissionPending, Maintenance: tr.Source == eventlog.SourceMaintenance}
			}
			s.CurrentTurn, s.State, s.PermissionPending = "", state.StateWaitingForInput, false
			if tr.Fixes != nil {
				s.StopReason = stop
			}
		}
		if stop == eventlog.StopUserCanceled {
			// An explicit stop: the interrupted turn is never continued.
			s.Stopped, s.StopReason, s.Interrupted, s.Pause = true, stop, nil, nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", id, err)
	}
	if stop != eventlog.StopUserCanceled {
		rep.Pending, _ = s.AwaitingContinuation()
	}
	rep.Appended = int(log.NextSeq() - before)
	return rep, nil
}

// previewRepair is what Repair would do, read without writing: s is the
// loaded record, changed in this copy only.
func previewRepair(h *state.Home, s *state.Session, id, stop string) (*RepairReport, error) {
	rep := &RepairReport{SessionID: id, DryRun: true, UnknownCalls: []string{}, UnknownChildren: []string{}}
	r, err := eventlog.ScanBackward(h.LogPath(id), func(int64, []byte) bool { return false })
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	rep.TornBytes = r.TornBytes
	if s.CurrentTurn != "" {
		tr := owner.RepairTurn(owner.TurnEvents(h.LogPath(id), s.CurrentTurn), s.CurrentTurn, stop)
		if tr.Fixes != nil {
			rep.Turn, rep.Appended = s.CurrentTurn, len(tr.Fixes)+1
		}
		for _, c := range tr.UnknownCalls {
			rep.UnknownCalls = append(rep.UnknownCalls, c.ToolCallID)
		}
		for _, c := range tr.UnknownChildren {
			rep.UnknownChildren = append(rep.UnknownChildren, c.ID)
		}
		// What the repair would record, in this copy only.
		owner.ReleaseInitialPrompt(s, tr, tr.Fixes != nil && stop == eventlog.StopShutdown)
		if tr.Fixes != nil && stop == eventlog.StopShutdown && s.InitialPrompt == "" {
			s.Interrupted = &state.Interruption{Turn: s.CurrentTurn}
		}
		s.CurrentTurn = ""
	}
	if stop == eventlog.StopShutdown {
		rep.Pending, _ = s.AwaitingContinuation()
	}
	return rep, nil
}
