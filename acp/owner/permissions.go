package owner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// Permission modes (see docs/configuration.md).
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

// TerminalAllowed says whether an agent may run a command in a client
// terminal under mode: always under approve-all, never under deny-all, and
// under the other modes only after a request to run something (a non-read
// tool call) was allowed earlier in the same turn: the agent asks first,
// the person (or the mode) answers, and the terminal carries out what was
// allowed (see docs/configuration.md).
func TerminalAllowed(mode string, allowedInTurn bool) error {
	switch {
	case mode == PermApproveAll:
		return nil
	case mode == PermDenyAll:
		return fmt.Errorf("terminals are refused under the deny-all permission mode")
	case allowedInTurn:
		return nil
	}
	return fmt.Errorf("no request to run a command was allowed in this turn (permission mode %s): ask with session/request_permission first", mode)
}

// terminalAllowed is TerminalAllowed for the running turn.
func (o *owner) terminalAllowed() error {
	turn := o.currentTurn()
	o.mu.Lock()
	allowed := turn != "" && o.allowedRunTurn == turn
	o.mu.Unlock()
	return TerminalAllowed(o.turnPermissions(), allowed)
}

// ErrBadPermissionMode is a usage error.
func ErrBadPermissionMode(m string) error {
	return fmt.Errorf("unknown permission mode %q: use ask, approve-reads, approve-all, deny-all or defer", m)
}

// permission answers session/request_permission by the mode of the
// running turn and logs the request and the answer. A parked request has
// an id (request_id) that its answer must name.
func (o *owner) permission(ctx context.Context, req sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	name := ""
	if req.ToolCall.Title != nil {
		name = *req.ToolCall.Title
	}
	var kind sdk.ToolKind
	if req.ToolCall.Kind != nil {
		kind = *req.ToolCall.Kind
	}
	turnMode := o.turnPermissions()
	rid := ""
	var asker *state.Asker
	if turnMode == PermAsk {
		asker = o.callerAsks()
	}
	if Parks(turnMode, kind) || asker != nil {
		rid = state.NewRequestID()
	}
	child := o.logPermissionRequest(req, name, kind, rid)
	ans := o.answerPermission(ctx, req, turnMode, kind, rid, asker)
	outcome := "cancelled"
	if ans.optionID != "" {
		outcome = "selected"
	}
	answer := map[string]any{"outcome": outcome, "option_id": ans.optionID, "allowed": ans.allowed, "mode": turnMode}
	if rid != "" {
		answer["answered_by"] = ans.answeredBy
	}
	if ans.unasked {
		answer["unasked"] = true
	}
	data, _ := json.Marshal(answer)
	o.resolved(rid, &eventlog.Event{Type: eventlog.EventPermissionResolved, ToolCallID: string(req.ToolCall.ToolCallId), ToolName: name, Content: outcome + " " + ans.optionID, Data: data, ChildID: child})
	return PermissionAnswer(ans.optionID)
}

// logPermissionRequest marks the record pending (parking the request when
// rid is set) and then logs the request; it returns the child session the
// request came from, or "". The record says "pending" before the log shows
// the question, and stops saying it only after the answer is logged: a
// crash in between is always seen as a pending permission.
func (o *owner) logPermissionRequest(req sdk.RequestPermissionRequest, name string, kind sdk.ToolKind, rid string) (child string) {
	id := string(req.ToolCall.ToolCallId)
	parked := state.ParkedRequest{ID: rid, TurnID: o.currentTurn(), ToolName: name, ToolCallID: id, RequestedAt: o.now()}
	o.mu.Lock()
	if o.lastResolved != "" && o.lastResolvedTurn == parked.TurnID {
		// Only within a turn: a new turn needed a new prompt, sent on purpose.
		at := o.lastResolvedAt
		parked.After, parked.AfterAt = o.lastResolved, &at
	}
	o.mu.Unlock()
	o.update(func(s *state.Session) {
		s.PermissionPending = true
		if rid != "" {
			s.ParkedRequests = append(s.ParkedRequests, parked)
		}
	})
	child = o.childOf(string(req.SessionId)) // children.go
	opts, _ := json.Marshal(req.Options)
	o.conn.Barrier(func() {
		var evs []*eventlog.Event
		if id != "" && child == "" && !o.noteCall(id) {
			// Some agents (Gemini CLI) ask before they announce the call: the
			// log gets the call from the request, so its result has one to join.
			evs = append(evs, acp.RequestedToolCall(o.currentTurn(), req))
		}
		evs = append(evs, &eventlog.Event{Type: eventlog.EventPermissionRequest, TurnID: o.currentTurn(), ToolCallID: id, ToolName: name, ToolKind: string(kind), Data: opts, Deferred: rid != "", RequestID: rid, ChildID: child})
		o.append(true, evs...)
	})
	return child
}

// permissionAnswer is how a permission request was answered.
type permissionAnswer struct {
	optionID, answeredBy string
	allowed              bool
	unasked              bool // ask mode with nobody to ask (a detached owner)
}

// answerPermission decides the answer: by the turn's mode, by the caller
// asked in this process, or, for a parked request (rid), by whoever answers
// it; a cancelled turn allows nothing.
func (o *owner) answerPermission(ctx context.Context, req sdk.RequestPermissionRequest, turnMode string, kind sdk.ToolKind, rid string, asker *state.Asker) permissionAnswer {
	var ans permissionAnswer
	mode, chosen := turnMode, ""
	if mode == PermAsk && rid == "" {
		mode, ans.unasked = PermDenyAll, o.job.Ask == nil && o.job.AskOption == nil
		switch {
		case o.job.AskOption != nil:
			chosen = o.job.AskOption(req)
		case o.job.Ask != nil && o.job.Ask(req):
			mode = PermApproveAll
		}
	}
	if rid != "" {
		mode, ans.answeredBy = o.awaitAnswer(ctx, rid, asker)
	}
	ans.optionID, ans.allowed = DecidePermission(mode, kind, req.Options)
	if id, ok := ChosenOption(req.Options, chosen); ok {
		ans.optionID, ans.allowed = id, isAllow(req.Options, id)
	}
	if ctx.Err() != nil || o.cancelled.Load() {
		ans.optionID, ans.allowed = "", false
	}
	if ans.allowed && !readOnlyKinds[kind] {
		turn := o.currentTurn()
		o.mu.Lock()
		o.allowedRunTurn = turn
		o.mu.Unlock()
	}
	return ans
}

// resolved logs e, the answer of request rid ("" when it was never parked),
// in the current turn, remembers it as the last answered request, and
// takes it off the record's parked requests.
func (o *owner) resolved(rid string, e *eventlog.Event) {
	e.TurnID, e.RequestID = o.currentTurn(), rid
	o.conn.Barrier(func() { o.append(true, e) })
	if rid != "" {
		turn := o.currentTurn()
		o.mu.Lock()
		o.lastResolved, o.lastResolvedAt, o.lastResolvedTurn = rid, o.now(), turn
		o.mu.Unlock()
	}
	o.update(func(s *state.Session) {
		s.ParkedRequests = slices.DeleteFunc(s.ParkedRequests, func(p state.ParkedRequest) bool { return p.ID == rid })
		s.PermissionPending = len(s.ParkedRequests) > 0
	})
}

// Answers of a parked request that no kandev approve or deny gave
// (permission_resolved's answered_by).
const (
	AnsweredByTimeout = "timeout"
	AnsweredByCancel  = "cancel"
	// AnsweredByAskerGone: the command that was to ask its person exited
	// first; with nobody left to ask, ask denies.
	AnsweredByAskerGone = "asker_gone"
)

// answerAmbiguity is how long a request asked just after another one was
// resolved can be answered only by name: an answer sent for the one before
// (racing its timeout, or another answer) must not land on it.
const answerAmbiguity = time.Second

// PickParked chooses the parked request an approve or deny answers: the
// one named (want), else the oldest. None parked, or the named one not
// among them (answered already, or never asked), is ErrNotFound: an answer
// never applies to a request it was not meant for. So is an unnamed answer
// while the oldest request was asked less than answerAmbiguity after
// another was resolved, and has waited less than that: the answer may have
// been meant for the one before.
func PickParked(sessionID string, parked []state.ParkedRequest, want string, now time.Time) (state.ParkedRequest, error) {
	if len(parked) == 0 {
		return state.ParkedRequest{}, fmt.Errorf("%w: session %s has no permission request waiting (see kandev status %s)", state.ErrNotFound, sessionID, sessionID)
	}
	if want != "" {
		for _, p := range parked {
			if p.ID == want {
				return p, nil
			}
		}
		return state.ParkedRequest{}, fmt.Errorf("%w: session %s has no permission request %s waiting (answered already?); kandev status %s lists the waiting ones", state.ErrNotFound, sessionID, want, sessionID)
	}
	p := parked[0]
	if p.AfterAt != nil && p.RequestedAt.Sub(*p.AfterAt) < answerAmbiguity && now.Sub(p.RequestedAt) < answerAmbiguity {
		return state.ParkedRequest{}, fmt.Errorf("%w: request %s of session %s was answered a moment ago, and request %s (%s) was asked just after it; if you mean that one, name it: kandev approve %s --request %s (or deny)",
			state.ErrNotFound, p.After, sessionID, p.ID, p.ToolName, sessionID, p.ID)
	}
	return p, nil
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
