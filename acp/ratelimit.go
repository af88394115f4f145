package acp

import (
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/limits"
)

// updateToEvents is updateToEvent, plus a limit event when the update is a
// usage_update that carries the agent's usage window: Claude's adapter sends
// the Claude SDK's rate limit info in the update's _meta, under
// "_claude/rateLimit" (claude-agent-acp 0.101.0). codex-acp 2.6.0 keeps its
// limits to itself (its /status command prints them), so nothing of it is read.
func updateToEvents(params []byte, tools toolNames) []*eventlog.Event {
	e := updateToEvent(params, tools)
	upd := gjson.GetBytes(params, "update")
	if upd.Get("sessionUpdate").String() != "usage_update" {
		return []*eventlog.Event{e}
	}
	meta := upd.Get("_meta").Get(gjson.Escape(limits.ClaudeMetaKey))
	if !meta.Exists() {
		return []*eventlog.Event{e}
	}
	if l := limitEvent(json.RawMessage(meta.Raw), time.Now()); l != nil {
		return []*eventlog.Event{e, l}
	}
	return []*eventlog.Event{e}
}

// limitEvent is the limit event of a _claude/rateLimit object (nil when it
// is not an object).
func limitEvent(raw json.RawMessage, now time.Time) *eventlog.Event {
	w, ok := limits.FromClaude(raw, now)
	if !ok {
		return nil
	}
	data, _ := json.Marshal(w)
	return &eventlog.Event{Type: eventlog.EventLimit, Summary: limits.Describe(&w), Data: data}
}
