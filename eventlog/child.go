package eventlog

// The events of an agent's children: the subagent sessions and background
// tasks it starts. Each carries the child's id (ChildID); a child's stream
// has types of its own, so that a reader that does not know them (an older
// kandev) keeps them as unknown events and never shows a child's words as
// the parent's.
const (
	// EventChildStarted: a child was announced (Data: its name, task,
	// prompt, kind, whether it runs in the background and may be
	// cancelled); ToolCallID is the parent's tool call that started it,
	// when known.
	EventChildStarted = "child_started"
	// EventChildMessage, EventChildThought, EventChildToolCall and
	// EventChildToolResult are the child's stream, with the fields of
	// their parent counterparts (agent_message, ...); a child_message with
	// role "user" is the prompt its parent gave it.
	EventChildMessage    = "child_message"
	EventChildThought    = "child_thought"
	EventChildToolCall   = "child_tool_call"
	EventChildToolResult = "child_tool_result"
	// EventChildUpdate is anything else a child reported (a work state,
	// progress, an update kandev does not interpret), raw in Data.
	EventChildUpdate = "child_update"
	// EventChildEnded: the child's end (State: completed, failed,
	// cancelled, disconnected, or unknown when a repair found it running
	// after its owner died); Summary: the agent's error text, if any.
	EventChildEnded = "child_ended"
)

// IsChildEvent reports whether t is one of the children's event types.
func IsChildEvent(t string) bool {
	switch t {
	case EventChildStarted, EventChildMessage, EventChildThought, EventChildToolCall, EventChildToolResult,
		EventChildUpdate, EventChildEnded:
		return true
	}
	return false
}
