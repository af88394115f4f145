package subagents

import (
	"github.com/tidwall/gjson"
)

// Action is where one session/update goes.
type Action int

const (
	ToParent    Action = iota // the parent's own stream, as without children
	ToChild                   // the child's stream (Route.Child)
	Started                   // a child was announced (Route.Spawn)
	ChildPrompt               // the prompt its parent gave the child (Route.Text)
	Ended                     // the child ended (Route.State, Route.Detail)
	Drop                      // a second view of what another update records
)

// Route is the decision for one update. Warning, when set, says what was
// wrong with it; the update is recorded all the same.
type Route struct {
	Action     Action
	Child      string
	Spawn      Spawn
	State      string
	Detail     string
	Text       string
	ToolCallID string
	Warning    string
}

// Router follows the children of one connection to an agent. Parent is the
// agent's session id for kandev's session ("" while it is not known: every
// update of an unknown session is then the parent's). The zero value is
// ready; it is not safe for concurrent use.
type Router struct {
	Parent string
	kids   map[string]*kid
	warned map[string]bool
}

type kid struct {
	ended bool
	async bool
	// restored: the log had the child before this connection, and it has
	// not been at work since; an agent restored by a load re-tells such a
	// child (its announcement, its end), which the log already has.
	restored bool
}

// Know tells the router of a child the log already has (from an earlier
// owner), so that its later updates are not taken for a stranger's, and
// what a restored agent re-tells of it is not recorded twice.
func (r *Router) Know(id string, ended bool) {
	if r.kids == nil {
		r.kids = map[string]*kid{}
	}
	r.kids[id] = &kid{ended: ended, restored: true}
}

// Route decides where an update of session sessionID goes; upd is the
// notification's update object.
func (r *Router) Route(sessionID string, upd gjson.Result) Route {
	if r.kids == nil {
		r.kids = map[string]*kid{}
	}
	switch upd.Get("sessionUpdate").Str {
	case "subagent_update":
		return r.rfdUpdate(sessionID, upd)
	case "subagent_spawned":
		return r.spawn(upd.Get("subagentSessionId").Str, Spawn{Kind: KindSubagent, Name: upd.Get("name").Str,
			Task: upd.Get("task").Str, Prompt: upd.Get("prompt").Str, CanCancel: upd.Get("capabilities.cancel").Bool(), Parent: sessionID}, "")
	case "subagent_state_update":
		return r.end(upd.Get("subagentSessionId").Str, upd.Get("state").Str, "")
	case "async_task_spawned":
		return r.spawn(upd.Get("asyncTaskId").Str, Spawn{Kind: KindAsyncTask, Name: upd.Get("name").Str, Task: upd.Get("description").Str,
			Background: true, CanCancel: upd.Get("canStop").Bool(), Parent: sessionID}, upd.Get("toolCallId").Str)
	case "async_task_progress":
		return r.stream(upd.Get("asyncTaskId").Str)
	case "async_task_state_update":
		return r.asyncState(upd)
	case "session_message":
		return r.message(sessionID, upd)
	}
	if r.isParent(sessionID) {
		return Route{Action: ToParent}
	}
	return r.stream(sessionID)
}

func (r *Router) isParent(sessionID string) bool {
	return r.kids[sessionID] == nil && (r.Parent == "" || sessionID == r.Parent || sessionID == "")
}

// rfdUpdate reads the subagents RFD's subagent_update: the first one of a
// child announces it, a work state of idle (with a stop reason) or unknown
// ends it, and running after an end is the same child at work again.
func (r *Router) rfdUpdate(sessionID string, upd gjson.Result) Route {
	id := upd.Get("sessionId").Str
	work := upd.Get("state.state").Str
	k := r.kids[id]
	if id == "" {
		return Route{Action: ToParent, Warning: "a subagent_update without a child session id"}
	}
	if k == nil && (work == "" || work == "running" || work == "requires_action") {
		return r.spawn(id, Spawn{Kind: KindSubagent, Name: upd.Get("title").Str, Task: upd.Get("description").Str,
			CanCancel: upd.Get("capabilities.cancel").Exists(), Parent: sessionID}, "")
	}
	switch work {
	case "idle":
		return r.end(id, rfdEnd(upd.Get("state.stopReason").Str), upd.Get("state.error.message").Str)
	case "unknown":
		return r.end(id, Disconnected, "")
	case "running", "requires_action":
		if k.ended {
			k.ended, k.restored = false, false // an idle RFD child may be given more work
		}
	}
	return Route{Action: ToChild, Child: id}
}

// rfdEnd is the end an idle work state's stop reason says; an idle child
// with no stop reason ended for a cause the agent did not see.
func rfdEnd(stop string) string {
	switch stop {
	case "end_turn", "max_tokens", "max_turn_requests", "refusal":
		return Completed
	case "cancelled":
		return Cancelled
	case "error":
		return Failed
	}
	return Disconnected
}

func (r *Router) spawn(id string, s Spawn, toolCall string) Route {
	if id == "" {
		return Route{Action: ToParent, Warning: "a child announced without an id"}
	}
	rt := Route{Action: Started, Child: id, Spawn: s, ToolCallID: toolCall}
	if k := r.kids[id]; k != nil && k.restored {
		return Route{Action: Drop} // a restored agent announcing a child of the log again
	} else if k != nil {
		rt.Warning = "child " + id + " was announced again: its id is reused"
	}
	r.kids[id] = &kid{async: s.Kind == KindAsyncTask}
	return rt
}

func (r *Router) end(id, state, detail string) Route {
	rt := Route{Action: Ended, Child: id, State: endState(state), Detail: detail}
	k := r.kids[id]
	switch {
	case k == nil:
		rt.Warning = "an end for child " + id + ", which was never announced"
		r.kids[id] = &kid{ended: true}
	case k.ended && k.restored:
		return Route{Action: Drop} // a restored agent telling an end the log has
	case k.ended:
		rt.Warning = "a second end for child " + id
	default:
		k.ended = true
	}
	return rt
}

// endState is a recorded end: one of the four the agent may report, else
// disconnected (it ended, how is not known).
func endState(s string) string {
	switch s {
	case Completed, Failed, Cancelled, Disconnected:
		return s
	case "stopped":
		return Cancelled
	}
	return Disconnected
}

func (r *Router) asyncState(upd gjson.Result) Route {
	id := upd.Get("asyncTaskId").Str
	switch st := upd.Get("state").Str; st {
	case "completed", "failed", "stopped":
		return r.end(id, st, upd.Get("summary").Str)
	}
	return r.stream(id)
}

// stream routes an update of child id's own stream.
func (r *Router) stream(id string) Route {
	rt := Route{Action: ToChild, Child: id}
	if r.kids[id] == nil && !r.warned[id] {
		if r.warned == nil {
			r.warned = map[string]bool{}
		}
		r.warned[id] = true // once per stranger: its stream is recorded, not a warning per line
		rt.Warning = "updates for child " + id + ", which was never announced"
	}
	return rt
}

// message reads a session_message: the prompt a parent gives a child (its
// incoming view is recorded, the sender's view dropped), or a child's
// answer to its parent (recorded in the child's stream).
func (r *Router) message(sessionID string, upd gjson.Result) Route {
	from, to := upd.Get("senderSessionId").Str, upd.Get("recipientSessionId").Str
	text := contentText(upd.Get("content"))
	id := upd.Get("messageId").Str
	switch {
	case r.kids[to] != nil && sessionID == to:
		return Route{Action: ChildPrompt, Child: to, Text: text, ToolCallID: id}
	case r.kids[to] != nil && sessionID == from:
		return Route{Action: Drop}
	case r.kids[from] != nil:
		return Route{Action: ToChild, Child: from}
	}
	if r.isParent(sessionID) {
		return Route{Action: ToParent}
	}
	return r.stream(sessionID)
}

func contentText(c gjson.Result) string {
	if c.IsObject() {
		return c.Get("text").Str
	}
	s := ""
	for _, b := range c.Array() {
		s += b.Get("text").Str
	}
	return s
}
