package owner

import (
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
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
	// UnknownChildren are the turn's children whose outcome is unknown
	// (children.go).
	UnknownChildren []subagents.Child
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
	// A child the agent started, and the child's stream, are its answer too.
	eventlog.EventChildStarted: true, eventlog.EventChildMessage: true, eventlog.EventChildThought: true,
	eventlog.EventChildToolCall: true, eventlog.EventChildToolResult: true, eventlog.EventChildUpdate: true,
}

// TurnInfo is what a turn's events say about it.
type TurnInfo struct {
	Started, Ended bool
	StopReason     string // of the turn_ended, when Ended
	Source         string // the turn's source
	UserText       string // the turn's own user message as logged
	// Steers are the messages steered into the turn while it ran
	// (prompt --steer), in order.
	Steers []string
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
	// UnknownChildren are the children without a recorded end, or marked
	// unknown by a repair.
	UnknownChildren []subagents.Child
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
			if e.Source == eventlog.SourceSteer {
				info.Steers = append(info.Steers, e.Content)
			} else {
				info.UserText = e.Content
			}
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
	info.UnknownChildren = unvouched(events, turnID)
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

// Request is what the turn was asked: its own message, then each message
// steered into it while it ran.
func (i TurnInfo) Request() string {
	if len(i.Steers) == 0 {
		return i.UserText
	}
	var b strings.Builder
	b.WriteString(i.UserText)
	for _, s := range i.Steers {
		b.WriteString("\n\n(added while you worked on it:) ")
		b.WriteString(s)
	}
	return b.String()
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
		return TurnRepair{ClosedByShutdown: info.StopReason == eventlog.StopShutdown, UnknownCalls: info.UnknownCalls, UnknownChildren: info.UnknownChildren,
			Accepted: info.Accepted, Delivery: DecideDelivery(info), PermissionOpen: info.PermissionOpen, Source: info.Source, UserText: info.UserText}
	}
	r := TurnRepair{UnknownCalls: info.Unresolved, UnknownChildren: info.UnknownChildren, Accepted: info.Accepted, Delivery: DecideDelivery(info),
		PermissionOpen: info.PermissionOpen, Source: info.Source, UserText: info.UserText}
	var unknown []string
	for _, c := range info.Unresolved {
		unknown = append(unknown, c.ToolCallID)
		r.Fixes = append(r.Fixes, &eventlog.Event{Type: eventlog.EventToolResult, TurnID: turnID, ToolName: c.ToolName, ToolCallID: c.ToolCallID,
			ToolStatus: toolStatusUnknown, Content: "kandev was stopped while this tool call ran: the action may or may not have happened."})
	}
	r.Fixes = append(r.Fixes, childRepairs(turnID, info.UnknownChildren)...) // children.go
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

// TurnEvents reads the events of one turn from the end of the log at path:
// the cost depends on the turn's length, not the log's.
func TurnEvents(path, turnID string) []eventlog.Event {
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

// repairInterrupted closes the record's current turn, whose owner died, by
// appending what RepairTurn decided (tr) and closing it in the record
// (closeInterruptedTurn). When the log shows the turn ended (or never
// began), only the record lagged behind and is set straight.
func (o *owner) repairInterrupted(tr TurnRepair) {
	turn := o.s.CurrentTurn
	if tr.Fixes != nil {
		o.mu.Lock()
		o.turnID = turn
		o.mu.Unlock()
		o.append(true, append(tr.Fixes, &eventlog.Event{Type: eventlog.EventState, State: state.StateWaitingForInput, TurnID: turn})...)
	}
	o.update(func(s *state.Session) { closeInterruptedTurn(s, turn, tr) })
	o.mu.Lock()
	o.turnID = ""
	o.mu.Unlock()
	// Children of earlier turns died with the same agent: marked in the
	// repaired turn, and named by its continuation.
	orphans := o.orphanChildren("kandev was stopped while this child ran: its work may or may not have been done.", turn) // children.go
	if o.plan.FollowUp == FollowContinue {
		o.plan.UnknownChildren = withOrphans(o.plan.UnknownChildren, orphans)
	}
}
