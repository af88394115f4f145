// Package subagents decides what kandev records and says about an agent's
// children: the subagent sessions and background tasks it starts.
//
// Guarantees:
//   - Every update is routed to exactly one place (Router): the parent's
//     stream, a child's stream, a child's start or its end. What does not
//     fit (an update for a child that was never announced, a second end, an
//     announcement that reuses a child id) is still routed and comes with a
//     warning, never a failure.
//   - A child's state is read from the log alone (Summarize): it is running
//     until an end is recorded, and a child whose end a repair could not
//     see is unknown, never completed.
//   - The continuation of an interrupted turn names each such child, its
//     task and its side-effecting tool calls (ContinuationNote).
//
// Everything here is a function of data: no file, process or clock.
package subagents

// The states of a child, as recorded and shown.
const (
	Running      = "running"
	Completed    = "completed"
	Failed       = "failed"
	Cancelled    = "cancelled"
	Disconnected = "disconnected"
	// Unknown: the child was running when its owner or agent died; it may
	// or may not have finished its work.
	Unknown = "unknown"
)

// The kinds of child.
const (
	KindSubagent  = "subagent"   // a child session (subagents RFD, or its earlier draft)
	KindAsyncTask = "async_task" // a background task the agent reports (async_task_spawned)
)

// Spawn is what a child_started event holds in its Data.
type Spawn struct {
	Name       string `json:"name,omitempty"`
	Task       string `json:"task,omitempty"`
	Prompt     string `json:"prompt,omitempty"`
	Kind       string `json:"kind"`
	Background bool   `json:"background,omitempty"`
	CanCancel  bool   `json:"can_cancel,omitempty"`
	// Parent is the session the child was announced on: the agent's
	// session, or another child's.
	Parent string `json:"parent,omitempty"`
}
