package demoagent

import (
	"context"
)

// A load replays a session's children as Claude's ACP adapter (0.101)
// does to a client that declared subagents: each child is announced on
// its parent where it started, with its prompt, and its history goes out
// under its own session id; every child's end goes out before the load's
// answer, and each child's state once more after it, since the subagents
// RFD makes that answer the line between history and the state now.

// roleChild is a parent's entry for a child it started: ToolCallID is the
// child's session id, Title its name, Text its prompt. The child's own
// conversation is its session file, <Dir>/<child id>.json.
const roleChild = "subagent"

// childState is a replayed child and its work state now.
type childState struct {
	id    string
	state map[string]any
}

// replayChild announces the child of entry e on parent and replays its
// history; it returns the child's state, nil when the client is not shown
// children as sessions (it did not declare subagents).
func (a *agent) replayChild(ctx context.Context, parent string, e entry) (*childState, error) {
	if !a.subagents.Load() {
		return nil, nil
	}
	id := e.ToolCallID
	if err := a.announce(ctx, parent, id, e.Title, "agent-"+id, e.Text); err != nil {
		return nil, err
	}
	kid := &childState{id: id, state: workState("", "")}
	f, err := load(a.opts.Dir, id)
	if err != nil {
		return kid, nil // its history is lost: its association is all there is
	}
	for _, ce := range f.Entries {
		if ce.Role == roleUser {
			continue // the prompt went out as the child's incoming message
		}
		if err := a.replay(ctx, id, ce); err != nil {
			return nil, err
		}
	}
	kid.state = workState(f.End, f.EndError)
	return kid, nil
}

// childStates tells the state of each replayed child on parent, the last
// started first, as Claude's adapter ends its replay.
func (a *agent) childStates(ctx context.Context, parent string, kids []childState) error {
	for i := len(kids) - 1; i >= 0; i-- {
		err := a.sendRaw(ctx, parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": kids[i].id, "state": kids[i].state})
		if err != nil {
			return err
		}
	}
	return nil
}
