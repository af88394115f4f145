package subagents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of the continuation's note about children, so that a turn with
// many children or long tasks still sends a prompt of bounded size.
const (
	maxNotedChildren = 20
	maxNotedCalls    = 10
	maxNotedText     = 200
)

// ContinuationNote is the part of an interrupted turn's continuation that
// names the children whose outcome is unknown: each child's name, id and
// task, and its side-effecting tool calls, with the request to check their
// effects before redoing them. "" when there are none.
func ContinuationNote(unknown []Child) string {
	if len(unknown) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("These subagents (children you started) were still running when kandev was stopped; their outcome is unknown (they may have finished their work, or part of it):\n")
	for i, c := range unknown {
		if i == maxNotedChildren {
			fmt.Fprintf(&b, "- and %d more (kandev transcript shows them)\n", len(unknown)-i)
			break
		}
		b.WriteString("- " + label(c))
		if t := firstOf(c.Task, c.Prompt); t != "" {
			b.WriteString(": " + clip(t))
		}
		b.WriteByte('\n')
		n := 0
		for _, call := range c.Calls {
			if !SideEffecting(call.Kind) {
				continue
			}
			if n == maxNotedCalls {
				b.WriteString("  - and more tool calls\n")
				break
			}
			n++
			fmt.Fprintf(&b, "  - tool call %s (id %s, %s)", firstOf(call.Name, "unnamed"), call.ID, call.Status)
			if in := compact(call.Input); in != "" {
				b.WriteString(": " + in)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("Before starting any of these subagents again or redoing their work, check what their side-effecting tool calls already did (files, commits, comments, running processes).\n")
	return b.String()
}

func label(c Child) string {
	kind := "subagent"
	if c.Kind == KindAsyncTask {
		kind = "background task"
	}
	if c.Name != "" {
		return fmt.Sprintf("%s %q (id %s)", kind, c.Name, c.ID)
	}
	return fmt.Sprintf("%s %s", kind, c.ID)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// clip keeps the first maxNotedText bytes of s on one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxNotedText {
		return s
	}
	k := maxNotedText
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + "…"
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		return ""
	}
	if s := b.String(); s != "null" && s != "{}" {
		return clip(s)
	}
	return ""
}
