package acp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/state"
)

// Permission modes (SPEC 6a).
const (
	PermAsk          = "ask"
	PermApproveReads = "approve-reads"
	PermApproveAll   = "approve-all"
	PermDenyAll      = "deny-all"
)

// ValidPermissionMode reports whether m is one of the four modes.
func ValidPermissionMode(m string) bool {
	return m == PermAsk || m == PermApproveReads || m == PermApproveAll || m == PermDenyAll
}

// readOnlyKinds are the tool kinds approve-reads lets through.
var readOnlyKinds = map[sdk.ToolKind]bool{
	sdk.ToolKindRead: true, sdk.ToolKindSearch: true, sdk.ToolKindThink: true, sdk.ToolKindFetch: true,
}

// DecidePermission picks the answer to a permission request under mode
// (ask has already been resolved to allow or deny by the caller). It returns
// the chosen option id, or "" for a cancelled outcome when no option fits.
func DecidePermission(mode string, kind sdk.ToolKind, options []sdk.PermissionOption) (optionID string, allowed bool) {
	allow := mode == PermApproveAll || (mode == PermApproveReads && readOnlyKinds[kind])
	pick := func(kinds ...sdk.PermissionOptionKind) string {
		for _, k := range kinds {
			for _, o := range options {
				if o.Kind == k {
					return string(o.OptionId)
				}
			}
		}
		return ""
	}
	if allow {
		if id := pick(sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways); id != "" {
			return id, true
		}
		return "", false
	}
	return pick(sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways), false
}

// PermissionAnswer builds the ACP response for an option id ("" = cancelled).
func PermissionAnswer(optionID string) sdk.RequestPermissionResponse {
	if optionID == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(optionID)}}}
}

// ErrBadPermissionMode is a usage error.
func ErrBadPermissionMode(m string) error {
	return fmt.Errorf("unknown permission mode %q: use ask, approve-reads, approve-all or deny-all", m)
}

// permission answers session/request_permission by the configured mode and
// logs the request and the answer.
func (o *owner) permission(ctx context.Context, req sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	name := ""
	if req.ToolCall.Title != nil {
		name = *req.ToolCall.Title
	}
	var kind sdk.ToolKind
	if req.ToolCall.Kind != nil {
		kind = *req.ToolCall.Kind
	}
	opts, _ := json.Marshal(req.Options)
	id := string(req.ToolCall.ToolCallId)
	// The record says "pending" before the log shows the question, and stops
	// saying it only after the answer is logged: a crash in between is
	// always seen as a pending permission.
	o.update(func(s *state.Session) { s.PermissionPending = true })
	o.conn.Barrier(func() {
		var evs []*state.Event
		if id != "" && !o.noteCall(id) {
			// Some agents (Gemini CLI) ask before they announce the call: the
			// log gets the call from the request, so its result has one to join.
			evs = append(evs, &state.Event{Type: state.EventToolCall, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name,
				ToolKind: string(kind), ToolStatus: "pending", Input: rawJSON(req.ToolCall.RawInput)})
		}
		evs = append(evs, &state.Event{Type: state.EventPermissionRequest, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, ToolKind: string(kind), Data: opts})
		o.append(true, evs...)
	})
	mode := o.job.Permissions
	if mode == PermAsk {
		mode = PermDenyAll
		if o.job.Ask != nil && o.job.Ask(req) {
			mode = PermApproveAll
		}
	}
	optionID, allowed := DecidePermission(mode, kind, req.Options)
	if ctx.Err() != nil || o.cancelled.Load() {
		optionID, allowed = "", false
	}
	outcome := "cancelled"
	if optionID != "" {
		outcome = "selected"
	}
	data, _ := json.Marshal(map[string]any{"outcome": outcome, "option_id": optionID, "allowed": allowed, "mode": o.job.Permissions})
	o.conn.Barrier(func() {
		o.append(true, &state.Event{Type: state.EventPermissionResolved, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, Content: outcome + " " + optionID, Data: data})
	})
	o.update(func(s *state.Session) { s.PermissionPending = false })
	return PermissionAnswer(optionID)
}

// noteCall records that the log holds tool call id and reports whether it
// already did. It runs on the connection's recorder goroutine only.
func (o *owner) noteCall(id string) (seen bool) {
	if o.loggedCalls == nil {
		o.loggedCalls = map[string]bool{}
	}
	seen = o.loggedCalls[id]
	o.loggedCalls[id] = true
	return seen
}
