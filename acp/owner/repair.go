package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

var ownPID = os.Getpid()

// TurnRepair is what RepairTurn found in an interrupted turn and what
// closes it.
type TurnRepair struct {
	Fixes        []*eventlog.Event // events to append; nil when nothing is to be done
	UnknownCalls []eventlog.Event  // tool calls whose outcome is unknown
	// Accepted is set when the agent answered anything in the turn.
	Accepted bool
	// Delivery says whether the turn's prompt reached the agent
	// (DecideDelivery): one that never did is sent again, not continued.
	Delivery PromptDelivery
	// PermissionOpen is set when a permission request has no answer in the log.
	PermissionOpen bool
	Source         string // the turn's source
	UserText       string // the turn's user message as logged
	// ClosedByShutdown is set when the turn already ended with stop_reason
	// shutdown: an owner terminated by SIGTERM closed it and left it owed
	// its continuation. Fixes is nil (nothing to append).
	ClosedByShutdown bool
}

// agentEventTypes are the events only an agent that took the prompt produces.
var agentEventTypes = map[string]bool{
	eventlog.EventAgentMessage: true, eventlog.EventAgentThought: true, eventlog.EventToolCall: true,
	eventlog.EventToolResult: true, eventlog.EventPlan: true, eventlog.EventAgentUpdate: true,
	eventlog.EventPermissionRequest: true,
}

// TurnInfo is what a turn's events say about it.
type TurnInfo struct {
	Started, Ended bool
	StopReason     string // of the turn_ended, when Ended
	Source         string // the turn's source
	UserText       string // the turn's user message as logged
	// Queued: the turn served an inbox input (its turn_started names it).
	Queued bool
	// Accepted is set when the agent answered anything in the turn.
	Accepted bool
	// SendRecorded: the turn's owner records prompt_sent (turn_started says
	// so); PromptSent: the log has that record.
	SendRecorded, PromptSent bool
	// PermissionOpen is set when a permission request has no answer in the log.
	PermissionOpen bool
	// Unresolved are the tool calls without a result; UnknownCalls also
	// counts those whose result a repair marked unknown.
	Unresolved, UnknownCalls []eventlog.Event
}

// DescribeTurn reads turn turnID from its events (in seq order).
func DescribeTurn(events []eventlog.Event, turnID string) TurnInfo {
	var info TurnInfo
	var calls []eventlog.Event
	seen := map[string]bool{}
	result := map[string]string{} // tool call id -> status of its result
	asked := map[string]bool{}
	for _, e := range events {
		if e.TurnID != turnID {
			continue
		}
		if agentEventTypes[e.Type] {
			info.Accepted = true
		}
		switch e.Type {
		case eventlog.EventTurnStarted:
			info.Started, info.Source, info.SendRecorded = true, e.Source, e.SendRecorded
			info.Queued = e.InputID != ""
		case eventlog.EventPromptSent:
			info.PromptSent = true
		case eventlog.EventUserMessage:
			info.UserText = e.Content
		case eventlog.EventTurnEnded:
			info.Ended, info.StopReason = true, e.StopReason
		case eventlog.EventToolCall:
			if !seen[e.ToolCallID] {
				seen[e.ToolCallID] = true
				calls = append(calls, e)
			}
		case eventlog.EventToolResult:
			result[e.ToolCallID] = e.ToolStatus
		case eventlog.EventPermissionRequest:
			asked[e.ToolCallID] = true
		case eventlog.EventPermissionResolved:
			delete(asked, e.ToolCallID)
		}
	}
	info.PermissionOpen = len(asked) > 0
	for _, c := range calls {
		status, resolved := result[c.ToolCallID]
		if !resolved {
			info.Unresolved = append(info.Unresolved, c)
		}
		if !resolved || status == toolStatusUnknown {
			info.UnknownCalls = append(info.UnknownCalls, c)
		}
	}
	return info
}

// toolStatusUnknown marks a result a repair appended: the call may or may not have happened.
const toolStatusUnknown = "unknown"

// RepairTurn decides how to close interrupted turn turnID from the log's
// events: an unknown-outcome tool_result for each tool call without a
// result, turn_ended with stop reason stop, and an info marker saying what
// was repaired. A turn that already ended, or whose turn_started never
// reached the log, needs nothing, so repairing twice appends nothing the
// second time.
func RepairTurn(events []eventlog.Event, turnID, stop string) TurnRepair {
	if turnID == "" {
		return TurnRepair{}
	}
	info := DescribeTurn(events, turnID)
	if !info.Started {
		return TurnRepair{}
	}
	if info.Ended {
		// Nothing to append. A turn closed by a terminated owner (SIGTERM) is
		// still owed its continuation.
		return TurnRepair{ClosedByShutdown: info.StopReason == eventlog.StopShutdown, UnknownCalls: info.UnknownCalls,
			Accepted: info.Accepted, Delivery: DecideDelivery(info), PermissionOpen: info.PermissionOpen, Source: info.Source, UserText: info.UserText}
	}
	r := TurnRepair{UnknownCalls: info.Unresolved, Accepted: info.Accepted, Delivery: DecideDelivery(info),
		PermissionOpen: info.PermissionOpen, Source: info.Source, UserText: info.UserText}
	var unknown []string
	for _, c := range info.Unresolved {
		unknown = append(unknown, c.ToolCallID)
		r.Fixes = append(r.Fixes, &eventlog.Event{Type: eventlog.EventToolResult, TurnID: turnID, ToolName: c.ToolName, ToolCallID: c.ToolCallID,
			ToolStatus: toolStatusUnknown, Content: "kandev was stopped while this tool call ran: the action may or may not have happened."})
	}
	r.Fixes = append(r.Fixes, &eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turnID, StopReason: stop})
	summary := "Repaired turn " + turnID + " interrupted by the owner's death"
	if len(unknown) > 0 {
		summary += "; tool calls with unknown outcome: " + join(unknown)
	}
	m := history.NewMarker(history.MarkerSessionRepaired, summary+".", "")
	m.TurnID = turnID
	data, _ := json.Marshal(map[string]any{"unknown_tool_calls": unknown})
	m.Data = data
	r.Fixes = append(r.Fixes, &m)
	return r
}

// turnEvents reads the events of one turn from the end of the log: the
// cost depends on the turn's length, not the log's.
func turnEvents(path, turnID string) []eventlog.Event {
	var out []eventlog.Event
	_, _ = eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		var e eventlog.Event
		if json.Unmarshal(line, &e) != nil {
			return true
		}
		if e.TurnID == turnID {
			out = append(out, e)
		}
		return !(e.Type == eventlog.EventTurnStarted && e.TurnID == turnID)
	})
	slices.Reverse(out)
	return out
}

// newestTurnOf is the id of the newest turn started with source, "" when
// none; read from the end of the log.
func newestTurnOf(path, source string) string {
	turn := ""
	_, _ = eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		if gjson.GetBytes(line, "type").String() != eventlog.EventTurnStarted {
			return true // not decoded: a long message line costs one pass
		}
		e, ok := eventlog.DecodeEvent(line)
		if ok && e.Source == source {
			turn = e.TurnID
			return false
		}
		return true
	})
	return turn
}

func join(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}

// RepairReport says what Repair did (or would do with dry run).
type RepairReport struct {
	SessionID    string   `json:"session_id"`
	TornBytes    int64    `json:"torn_bytes"`
	Turn         string   `json:"interrupted_turn,omitempty"`
	UnknownCalls []string `json:"unknown_tool_calls"`
	Appended     int      `json:"appended_events"`
	DryRun       bool     `json:"dry_run"`
	// Pending is the interrupted turn the next resume continues (repair
	// never sends the continuation itself).
	Pending string `json:"continuation_pending,omitempty"`
}

// Repair reconciles a session after a crash without relaunching its agent:
// it truncates a torn last log line and closes an interrupted turn
// (RepairTurn) with stop reason stop. It takes the owner lock, so it never
// races a live owner. Repairing twice appends nothing the second time.
func Repair(h *state.Home, id, stop string, dryRun bool) (*RepairReport, error) {
	lock, err := h.AcquireOwner(id)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := h.LoadSession(id)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return previewRepair(h, s, id, stop)
	}
	rep := &RepairReport{SessionID: id, UnknownCalls: []string{}}
	log, torn, err := h.OpenLog(id, eventlog.OpenLogOptions{Redact: history.RedactEvent})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	before := log.NextSeq()
	if err := finishRewind(h, log, s); err != nil {
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
	var tr TurnRepair
	if turn != "" {
		tr = RepairTurn(turnEvents(h.LogPath(id), turn), turn, stop)
		if tr.Fixes != nil {
			rep.Turn = turn
			evs = append(append(evs, tr.Fixes...), &eventlog.Event{Type: eventlog.EventState, State: state.StateWaitingForInput, TurnID: turn})
		}
		for _, c := range tr.UnknownCalls {
			rep.UnknownCalls = append(rep.UnknownCalls, c.ToolCallID)
		}
	}
	if len(evs) > 0 {
		if err := log.AppendSync(evs...); err != nil {
			return nil, fmt.Errorf("repair %s: %w", id, err)
		}
	}
	s, err = h.UpdateSession(id, func(s *state.Session) error {
		if turn != "" {
			releaseInitialPrompt(s, tr, tr.Fixes != nil && stop == eventlog.StopShutdown)
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
	rep := &RepairReport{SessionID: id, DryRun: true, UnknownCalls: []string{}}
	r, err := eventlog.ScanBackward(h.LogPath(id), func(int64, []byte) bool { return false })
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	rep.TornBytes = r.TornBytes
	if s.CurrentTurn != "" {
		tr := RepairTurn(turnEvents(h.LogPath(id), s.CurrentTurn), s.CurrentTurn, stop)
		if tr.Fixes != nil {
			rep.Turn, rep.Appended = s.CurrentTurn, len(tr.Fixes)+1
		}
		for _, c := range tr.UnknownCalls {
			rep.UnknownCalls = append(rep.UnknownCalls, c.ToolCallID)
		}
		// What the repair would record, in this copy only.
		releaseInitialPrompt(s, tr, tr.Fixes != nil && stop == eventlog.StopShutdown)
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
