package history

import (
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// The agent's children in the resume context: a fresh agent is told which
// subagents ran, what each was asked, and what came of it (its answer, or
// how it ended), never the child's whole stream.

// childEntry is the execution history entry of a child event, if any;
// names keeps each child's name from its start.
func childEntry(e eventlog.Event, names map[string]string) (replayEntry, bool) {
	switch {
	case e.Type == eventlog.EventChildStarted:
		var s struct{ Name, Task string }
		_ = json.Unmarshal(e.Data, &s)
		names[e.ChildID] = s.Name
		return newReplayEntry(subagentLabel(s.Name, "SUBAGENT")+" ", strings.TrimSpace(s.Task), maxReplayToolResultBytes, false), true
	case e.Type == eventlog.EventChildMessage && e.Source == "reply":
		text := strings.TrimSpace(e.Content)
		return newReplayEntry(subagentLabel(names[e.ChildID], "SUBAGENT RESULT")+" ", text, maxReplayToolResultBytes, false), text != ""
	case e.Type == eventlog.EventChildEnded && e.State != "completed":
		return newReplayEntry(subagentLabel(names[e.ChildID], "SUBAGENT RESULT")+" ", "("+e.State+")", maxReplayToolResultBytes, false), true
	}
	return replayEntry{}, false
}

func subagentLabel(name, kind string) string {
	return "[" + kind + ": " + toolNameForReplay(name) + "]"
}
