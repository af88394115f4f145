package history

import (
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// RenderText renders a transcript as a conversation for a terminal: "you:" and
// "agent:" lines, a tool call as one line "  [tool] name (state)", a marker as
// "  ! summary", an unknown event as "  ? unknown event TYPE ...", a blank
// line between entries. Reasoning is left out; the
// continuation prompt kandev sent is labelled "kandev (continuation):".
// Continuation lines of multi-line text are indented by two spaces.
func RenderText(entries []Entry) string {
	var b strings.Builder
	for _, en := range entries {
		var e strings.Builder
		m := en.Message
		for _, p := range m.Parts {
			switch p.Type {
			case PartText:
				if text := strings.TrimSpace(p.Text); text != "" {
					e.WriteString(speaker(m) + ": " + indent(text, "  ") + "\n")
				}
			case PartTool:
				name := strings.Join(strings.Fields(p.ToolName), " ")
				if name == "" {
					name = "unknown"
				}
				e.WriteString("  [tool] " + name + " (" + p.State + ")\n")
			case PartSubagent:
				e.WriteString(renderSubagent(p))
			case PartMarker:
				e.WriteString("  ! " + indent(strings.TrimSpace(p.Text), "    ") + "\n")
			case PartUnknown:
				e.WriteString("  ? unknown event " + p.Kind + " (written by a newer kandev; kandev events shows it)\n")
			}
		}
		if e.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.String())
	}
	return b.String()
}

// indent prefixes every line of s but the first with prefix; blank lines stay blank.
func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

func speaker(m Message) string {
	switch {
	case m.Role == RoleUser && m.Source == eventlog.SourceContinuation:
		return "kandev (continuation)"
	case m.Role == RoleUser:
		return "you"
	case m.Role == RoleAssistant:
		return "agent"
	}
	return m.Role
}
