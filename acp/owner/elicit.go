package owner

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// An agent's question to the person (elicitation/create) is handled as a
// permission request is (docs/configuration.md): asked on the terminal
// under ask (by this command, or parked for the command that sent the
// turn), parked under defer until kandev answer (or deny) names it, and
// declined under every other mode. It is logged as permission_requested
// (tool_kind "elicitation", the question as tool_name, the schema as data)
// and permission_resolved (the action and the content), through the
// log's redaction.

// ToolKindQuestion is the tool_kind of a question's log events.
const ToolKindQuestion = "elicitation"

// QuestionParks reports whether mode parks a question for an answer from
// another process; under ask a question is asked, under the other modes
// declined.
func QuestionParks(mode string) bool { return mode == PermDefer }

// elicit answers one question under the running turn's mode.
func (o *owner) elicit(ctx context.Context, q acp.ElicitationQuestion) acp.ElicitationAnswer {
	schema, _ := json.Marshal(q.Schema)
	turnMode := o.turnPermissions()
	var asker *state.Asker
	if turnMode == PermAsk {
		asker = o.callerAsks()
	}
	rid := ""
	if QuestionParks(turnMode) || asker != nil {
		rid = state.NewRequestID()
	}
	parked := state.ParkedRequest{ID: rid, TurnID: o.currentTurn(), ToolName: history.Redact(q.Message), RequestedAt: o.now(), Kind: state.ParkedQuestion, Schema: schema}
	o.update(func(s *state.Session) {
		s.PermissionPending = true
		if rid != "" {
			s.ParkedRequests = append(s.ParkedRequests, parked)
		}
	})
	o.conn.Barrier(func() {
		o.append(true, &eventlog.Event{Type: eventlog.EventPermissionRequest, TurnID: o.currentTurn(), ToolName: q.Message, ToolKind: ToolKindQuestion, Data: schema, Deferred: rid != "", RequestID: rid})
	})
	answer := acp.ElicitationAnswer{Action: acp.ElicitDecline}
	answeredBy, unasked := "", false
	switch {
	case rid != "":
		in, by := o.awaitInput(ctx, rid, asker, state.InputAnswer, state.InputDeny)
		answeredBy = by
		if in != nil && in.Kind == state.InputAnswer {
			if content, err := acp.ElicitationContent(q.Schema, in.Text); err == nil {
				answer = acp.ElicitationAnswer{Action: acp.ElicitAccept, Content: content}
			}
		}
	case turnMode == PermAsk && o.job.AskValue != nil:
		value, ok := o.job.AskValue(ctx, q.Message, acp.ElicitationFields(q.Schema))
		if content, err := acp.ElicitationContent(q.Schema, value); ok && value != "" && err == nil {
			answer = acp.ElicitationAnswer{Action: acp.ElicitAccept, Content: content}
		} else if !ok {
			answer.Action = acp.ElicitCancel
		}
	case turnMode == PermAsk:
		unasked = true
		if o.job.Warn != nil {
			o.job.Warn(AskDeclinedAdvice(q.Message))
		}
	}
	if ctx.Err() != nil || o.cancelled.Load() {
		answer = acp.ElicitationAnswer{Action: acp.ElicitCancel}
	}
	data := map[string]any{"action": answer.Action, "allowed": answer.Action == acp.ElicitAccept, "mode": turnMode}
	if answer.Content != nil {
		data["content"] = answer.Content
	}
	if rid != "" {
		data["answered_by"] = answeredBy
	}
	if unasked {
		data["unasked"] = true
	}
	b, _ := json.Marshal(data)
	o.resolved(rid, &eventlog.Event{Type: eventlog.EventPermissionResolved, ToolName: q.Message, ToolKind: ToolKindQuestion, Content: answer.Action, Data: b})
	return answer
}
