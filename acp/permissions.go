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
	// PermDefer approves reads and parks any other request until kandev
	// approve or kandev deny answers it (or the defer timeout denies it).
	PermDefer = "defer"
)

// ValidPermissionMode reports whether m is one of the five modes.
func ValidPermissionMode(m string) bool {
	return m == PermAsk || m == PermApproveReads || m == PermApproveAll || m == PermDenyAll || m == PermDefer
}

// permApproveAlways is the answer of kandev approve --always: the agent's
// "always" option when it offers one.
const permApproveAlways = "approve-always"

// Parks reports whether mode holds a request of kind for an answer from
// another process instead of deciding it now.
func Parks(mode string, kind sdk.ToolKind) bool { return mode == PermDefer && !readOnlyKinds[kind] }

// readOnlyKinds are the tool kinds approve-reads lets through.
var readOnlyKinds = map[sdk.ToolKind]bool{
	sdk.ToolKindRead: true, sdk.ToolKindSearch: true, sdk.ToolKindThink: true, sdk.ToolKindFetch: true,
}

// DecidePermission picks the answer to a permission request under mode
// (ask has already been resolved to allow or deny by the caller). It returns
// the chosen option id, or "" for a cancelled outcome when no option fits.
func DecidePermission(mode string, kind sdk.ToolKind, options []sdk.PermissionOption) (optionID string, allowed bool) {
	allow := mode == PermApproveAll || ((mode == PermApproveReads || mode == PermDefer) && readOnlyKinds[kind])
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
	if mode == permApproveAlways {
		if id := pick(sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindAllowOnce); id != "" {
			return id, true
		}
		return "", false
	}
	if allow {
		if id := pick(sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways); id != "" {
			return id, true
		}
		return "", false
	}
	return pick(sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways), false
}

// ChosenOption is the option a person chose by its id, when options holds
// it: the agent is answered with that very option (allow_always stays
// allow_always). ok is false for no choice or an id the agent never offered.
func ChosenOption(options []sdk.PermissionOption, id string) (string, bool) {
	for _, o := range options {
		if id != "" && string(o.OptionId) == id {
			return id, true
		}
	}
	return "", false
}

// isAllow reports whether option id is one that allows the call.
func isAllow(options []sdk.PermissionOption, id string) bool {
	for _, o := range options {
		if string(o.OptionId) == id {
			return o.Kind == sdk.PermissionOptionKindAllowOnce || o.Kind == sdk.PermissionOptionKindAllowAlways
		}
	}
	return false
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
	return fmt.Errorf("unknown permission mode %q: use ask, approve-reads, approve-all, deny-all or defer", m)
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
		evs = append(evs, &state.Event{Type: state.EventPermissionRequest, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, ToolKind: string(kind), Data: opts, Deferred: Parks(o.job.Permissions, kind)})
		o.append(true, evs...)
	})
	mode, chosen := o.job.Permissions, ""
	if mode == PermAsk {
		mode = PermDenyAll
		switch {
		case o.job.AskOption != nil:
			chosen = o.job.AskOption(req)
		case o.job.Ask != nil && o.job.Ask(req):
			mode = PermApproveAll
		}
	}
	if Parks(mode, kind) {
		mode = o.awaitAnswer(ctx)
	}
	optionID, allowed := DecidePermission(mode, kind, req.Options)
	if id, ok := ChosenOption(req.Options, chosen); ok {
		optionID, allowed = id, isAllow(req.Options, id)
	}
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
