package eventlog

import (
	"encoding/json"
	"time"
)

// Event types written to a session's log (see docs/event-log.md).
const (
	EventUserMessage        = "user_message"
	EventAgentMessage       = "agent_message"
	EventAgentThought       = "agent_thought"
	EventToolCall           = "tool_call"
	EventToolResult         = "tool_result"
	EventPlan               = "plan"
	EventTurnStarted        = "turn_started"
	EventTurnEnded          = "turn_ended"
	EventState              = "state"
	EventAgentStarted       = "agent_started"
	EventAgentExited        = "agent_exited"
	EventPermissionRequest  = "permission_requested"
	EventPermissionResolved = "permission_resolved"
	EventMarker             = "marker"
	EventAgentUpdate        = "agent_update" // a session/update kind kandev does not interpret, kept raw in Data
	// EventRewind is an epoch fence: what came after to_seq and before the
	// fence is no longer the agent's conversation (it stays in the log).
	EventRewind = "rewind"
	EventUsage  = "usage" // what the agent reported about context, tokens and cost
	// EventPromptSent records that the owner is writing the turn's
	// session/prompt to the agent: appended (fsync'd) just before the write,
	// so a turn without it never reached the agent.
	EventPromptSent = "prompt_sent"
	// EventLimit is the agent's usage window as it reported it (Data: the
	// window, state.RateWindow).
	EventLimit = "limit"
)

// Turn sources for turn_started.
const (
	SourceUser         = "user"
	SourceInitial      = "initial"
	SourceContinuation = "continuation"
	SourceQueued       = "queued"
	// SourceMaintenance is a turn kandev sends for the session's upkeep (the
	// agent's own compaction command), not a user's message.
	SourceMaintenance = "maintenance"
	// SourceSteer marks a user_message that joined a running turn (kandev
	// prompt --steer): its input_id and key name the inbox input it served.
	SourceSteer = "steer"
)

// Event is one line of a session's event log. The four history types
// (user_message, agent_message, tool_call, tool_result) keep the field names of
// kandev's history format; everything type-specific that has no field of its
// own goes into Data.
type Event struct {
	Seq       int64  `json:"seq"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`

	Role       string          `json:"role,omitempty"`
	Content    string          `json:"content,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolStatus string          `json:"tool_status,omitempty"`
	ToolKind   string          `json:"tool_kind,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	// ChildID names the child (a subagent session or background task) an
	// event belongs to (child.go).
	ChildID string `json:"child_id,omitempty"`

	Source  string `json:"source,omitempty"`   // turn_started; user_message: steer
	InputID string `json:"input_id,omitempty"` // turn_started (a steered user_message): the inbox input it serves
	Key     string `json:"key,omitempty"`      // turn_started (a steered user_message): that input's idempotency key (prompt --key)
	// SendRecorded (turn_started): this turn's owner appends prompt_sent when
	// it writes the prompt; a turn_started without it comes from an older
	// kandev, whose log cannot prove a prompt was never sent.
	SendRecorded bool   `json:"send_recorded,omitempty"`
	StopReason   string `json:"stop_reason,omitempty"` // turn_ended
	State        string `json:"state,omitempty"`       // state

	Restore        string `json:"restore,omitempty"`         // agent_started: resume, load, new, flag
	FallbackReason string `json:"fallback_reason,omitempty"` // agent_started
	PID            int    `json:"pid,omitempty"`             // agent_started, agent_exited

	Kind       string `json:"kind,omitempty"`       // marker
	Severity   string `json:"severity,omitempty"`   // marker
	Summary    string `json:"summary,omitempty"`    // marker
	Diagnostic string `json:"diagnostic,omitempty"` // marker

	Epoch int    `json:"epoch,omitempty"`  // rewind: the epoch the fence begins
	From  string `json:"from,omitempty"`   // agent_switched: the agent before
	To    string `json:"to,omitempty"`     // agent_switched: the agent after
	ToSeq *int64 `json:"to_seq,omitempty"` // rewind: the last seq kept (0: none, a clear)
	// usage: as the agent reported it (Cost is cumulative for its own
	// session), and SessionCost, kandev's total for the session after it.
	Used        *int64  `json:"used,omitempty"`
	Size        *int64  `json:"size,omitempty"`
	Cost        *Cost   `json:"cost,omitempty"`
	Tokens      *Tokens `json:"tokens,omitempty"`
	SessionCost *Cost   `json:"session_cost,omitempty"`

	Data json.RawMessage `json:"data,omitempty"`
	// Deferred marks a permission_requested that waits for kandev approve
	// or kandev deny (permission mode defer).
	Deferred bool `json:"deferred,omitempty"`
	// RequestID names a parked permission request (permission_requested,
	// and the permission_resolved that answers it).
	RequestID string `json:"request_id,omitempty"`

	// Raw is the line as stored, kept by ScanLog for an event of a type this
	// kandev does not know (a newer kandev wrote it), so it can be shown as is.
	Raw json.RawMessage `json:"-"`
}

// MaxSeq is the highest seq an event may carry: 2^53-1, the largest whole
// number every JSON reader holds exactly. A log line with a seq outside 1 to
// MaxSeq (negative, fractional, or so large that the next would overflow)
// is not a readable event: readers skip and report it, and the events
// appended after it are numbered on from the last readable one.
const MaxSeq = 1<<53 - 1

// ValidSeq reports whether seq is one an event may carry (1 to MaxSeq).
func ValidSeq(seq int64) bool { return seq >= 1 && seq <= MaxSeq }

// KnownEventType reports whether this kandev knows events of type t. An
// event of another type is kept and shown as unknown, never an error; a new
// type must be added here.
func KnownEventType(t string) bool {
	switch t {
	case EventUserMessage, EventAgentMessage, EventAgentThought, EventToolCall, EventToolResult,
		EventPlan, EventTurnStarted, EventTurnEnded, EventState, EventAgentStarted, EventAgentExited,
		EventPermissionRequest, EventPermissionResolved, EventMarker, EventAgentUpdate, EventRewind, EventUsage, EventPromptSent, EventSetupChanged, EventLimit,
		EventAgentSwitched:
		return true
	}
	return IsChildEvent(t)
}

// Time parses the event's timestamp; the zero time if it is malformed.
func (e Event) Time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
	return t
}

// FormatTime renders t the way every timestamp in the log is written.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Stop reasons kandev adds to the ACP ones.
const (
	StopShutdown     = "shutdown"
	StopUserCanceled = "user_canceled"
	StopError        = "error"
	StopProcessExit  = "process_exit"
	StopCancelled    = "cancelled"
	StopEndTurn      = "end_turn"
	// StopTakenOver: another machine took the session's claim over during
	// the turn (it expired here); this machine's copy stops and is not pushed.
	StopTakenOver = "taken_over"
)

// EventSetupChanged is logged when the session's setup changes: set on
// start or fork, by kandev set, or reported by the agent itself.
const EventSetupChanged = "setup_changed"

// EventAgentSwitched is logged when kandev switch moved the session to
// another agent (From, To): the next turn starts To with the conversation
// so far as its resume context.
const EventAgentSwitched = "agent_switched"
