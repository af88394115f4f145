package demoagent

// /subagent-bad CASE sends updates about children that make no sense, for
// tests of a client's tolerance (they are sent whatever the client
// declared):
//
//	stranger  a message of a child session never announced
//	twice     a child announced and ended twice
//	reuse     a child announced twice in the earlier draft's form (subagent_spawned)
func (t *turn) badSubagent(kind string) (bool, error) {
	parent := t.s.file.ID
	id := "sub-bad-" + kind
	ends := func() error {
		return t.a.sendRaw(t.ctx, parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": id,
			"state": map[string]any{"state": "idle", "stopReason": "end_turn"}})
	}
	switch kind {
	case "stranger":
		return true, t.a.sendRaw(t.ctx, id, map[string]any{"sessionUpdate": "agent_message_chunk",
			"content": map[string]any{"type": "text", "text": "a stranger speaks"}})
	case "twice":
		if err := t.a.sendRaw(t.ctx, parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": id,
			"title": "twice", "state": map[string]any{"state": "running"}}); err != nil {
			return true, err
		}
		if err := ends(); err != nil {
			return true, err
		}
		return true, ends()
	case "reuse":
		for range 2 {
			err := t.a.sendRaw(t.ctx, parent, map[string]any{"sessionUpdate": "subagent_spawned", "subagentSessionId": id,
				"name": "reused", "task": "the same id twice", "capabilities": map[string]any{}})
			if err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}
