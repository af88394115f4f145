package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
)

// childLines are status's lines about the session's children: a count by
// state, then one line for each child.
func childLines(w io.Writer, kids []subagents.Child) {
	if len(kids) == 0 {
		return
	}
	fmt.Fprintf(w, "children  %s\n", childCounts(kids))
	for _, c := range kids {
		name := c.Name
		if name == "" {
			name = "-"
		}
		bg := ""
		if c.Background {
			bg = " (background)"
		}
		fmt.Fprintf(w, "  %-9s %s %s%s", c.State, c.ID, printableLine(name), bg)
		if t := strings.TrimSpace(c.Task); t != "" {
			fmt.Fprintf(w, ": %s", printableLine(t))
		}
		fmt.Fprintln(w)
	}
}

// childCounts is "3 (1 running, 2 completed)".
func childCounts(kids []subagents.Child) string {
	return countsLine(subagents.Counts(kids))
}

// countsLine is "3 (1 running, 2 completed)" for counts by state.
func countsLine(counts map[string]int) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	states := make([]string, 0, len(counts))
	for st := range counts {
		states = append(states, st)
	}
	sort.Strings(states)
	parts := make([]string, 0, len(states))
	for _, st := range states {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// printChildTranscript prints the stream of child child of session id as
// a transcript of its own (its newest limit entries).
func printChildTranscript(env *Env, path, id, child string, limit int) error {
	evs, err := subagents.EventsFromLog(path, child)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return fmt.Errorf("session %s has no child %s (kandev status %s lists its children): %w", id, child, id, state.ErrNotFound)
	}
	for i := range evs {
		history.RedactEvent(&evs[i])
	}
	entries := history.Assemble(subagents.Stream(evs, child))
	older := len(entries) > limit
	if older {
		entries = entries[len(entries)-limit:]
	}
	page := transcriptPage{Entries: entries, HasOlder: older, Limit: limit}
	if page.Entries == nil {
		page.Entries = []history.Entry{}
	}
	env.Out.Object(page, func(w io.Writer) {
		if len(page.Entries) == 0 {
			fmt.Fprintln(w, "(no messages)")
			return
		}
		io.WriteString(w, history.RenderText(page.Entries))
	})
	return nil
}

// childLine is the line a stream shows for a child's start or end: the
// child's stream itself is kandev transcript --child's.
func childLine(e eventlog.Event) string {
	if e.Type == eventlog.EventChildEnded {
		line := e.ChildID + " " + e.State
		if e.Summary != "" {
			line += ": " + e.Summary
		}
		return line
	}
	var s subagents.Spawn
	_ = json.Unmarshal(e.Data, &s)
	line := e.ChildID + " started"
	if s.Name != "" {
		line = s.Name + " (" + line + ")"
	}
	if s.Background {
		line += " in the background"
	}
	return line
}

// cancelChild asks the session's owner to cancel one child, which the
// agent must offer to cancel; with no owner alive the child ended with it.
func cancelChild(env *Env, h *state.Home, id, child string) error {
	asked, err := owner.CancelChild(h, id, child, "")
	if err != nil {
		return err
	}
	if !asked {
		env.Out.Object(controlOutput{SessionID: id, Requested: state.InputCancel, DeliveredTo: ptr("")}, func(w io.Writer) {
			fmt.Fprintf(w, "nothing to cancel: no kandev process is running session %s, so its agent and child %s are not running either\n", id, child)
		})
		return nil
	}
	env.Out.Object(controlOutput{SessionID: id, Requested: state.InputCancel, DeliveredTo: ptr("owner")}, func(w io.Writer) {
		fmt.Fprintf(w, "cancel requested: the kandev process that runs session %s asks its agent to cancel child %s\n", id, child)
	})
	return nil
}

// sessionChildren are the session's children as its log records them
// (none: []); only a log whose record counts children is read, and an
// unreadable one shows none: status still answers.
func sessionChildren(h *state.Home, s *state.Session) []subagents.Child {
	var kids []subagents.Child
	if s.Subagents > 0 {
		kids, _ = subagents.FromLog(h.LogPath(s.ID))
	}
	if kids == nil {
		kids = []subagents.Child{}
	}
	return kids
}

// childSummary is kandev events' line of a child's event: the child's id,
// then what the parent's counterpart would show.
func childSummary(e eventlog.Event) string {
	switch e.Type {
	case eventlog.EventChildStarted, eventlog.EventChildUpdate:
		return e.ChildID + " " + string(e.Data)
	case eventlog.EventChildEnded:
		return e.ChildID + " " + e.State + " " + e.Summary
	case eventlog.EventChildToolCall, eventlog.EventChildToolResult:
		return fmt.Sprintf("%s %s %s [%s] %s", e.ChildID, e.ToolCallID, e.ToolName, e.ToolStatus, e.Content)
	}
	return e.ChildID + " " + e.Content
}
