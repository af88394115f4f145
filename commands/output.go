package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// Output is the one writer for text and JSON. Streaming commands hand it
// events; others hand it one object. Terminal detection decides colors only.
type Output struct {
	Out, Err io.Writer
	JSON     bool
	Quiet    bool
	Color    bool

	mu        sync.Mutex
	midLine   bool   // the last text written did not end a line
	lastKind  string // type of the last event rendered
	finalText strings.Builder
}

// Object prints v as one JSON object (JSON mode) or calls text.
func (o *Output) Object(v any, text func(w io.Writer)) {
	if o.JSON {
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return
	}
	text(o.Out)
}

// Error prints err as one line on stderr and, with --json, an error object on stdout.
func (o *Output) Error(err error) {
	msg := history.Redact(strings.TrimPrefix(err.Error(), "usage: "))
	fmt.Fprintln(o.Err, "kandev: "+firstLine(msg))
	if o.JSON && !errors.Is(err, errReported) {
		_ = json.NewEncoder(o.Out).Encode(map[string]any{"error": map[string]string{"code": errorCode(err), "message": msg}})
	}
}

// Info prints a line for people on stderr (never in quiet mode).
func (o *Output) Info(format string, args ...any) {
	if o.Quiet {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.breakLine()
	fmt.Fprintf(o.Err, o.dim(format)+"\n", args...)
}

// Warn prints a warning line on stderr, also in quiet mode.
func (o *Output) Warn(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.breakLine()
	fmt.Fprintln(o.Err, "warning: "+history.Redact(firstLine(msg)))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (o *Output) dim(s string) string {
	if !o.Color {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

func (o *Output) bold(s string) string {
	if !o.Color {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

func (o *Output) breakLine() {
	if o.midLine {
		fmt.Fprintln(o.Out)
		o.midLine = false
	}
}

// Event renders one event of a streaming command: the log line itself in
// JSON mode, a readable stream in text mode (tool calls one line each).
func (o *Output) Event(e state.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.JSON {
		b := []byte(e.Raw) // an unknown event as stored
		if b == nil {
			b, _ = json.Marshal(e)
		}
		o.Out.Write(append(b, '\n'))
		return
	}
	if o.Quiet {
		switch e.Type {
		case state.EventTurnStarted:
			o.finalText.Reset()
		case state.EventAgentMessage:
			o.finalText.WriteString(e.Content)
		}
		return
	}
	defer func() { o.lastKind = e.Type }()
	switch e.Type {
	case state.EventAgentMessage:
		if o.lastKind != state.EventAgentMessage {
			o.breakLine()
		}
		io.WriteString(o.Out, e.Content)
		o.midLine = e.Content != "" && !strings.HasSuffix(e.Content, "\n")
		if e.Content == "" {
			o.midLine = o.midLine || o.lastKind == state.EventAgentMessage
		}
	case state.EventAgentThought:
		if o.lastKind != state.EventAgentThought {
			o.breakLine()
			io.WriteString(o.Out, o.dim("thinking: "))
		}
		io.WriteString(o.Out, o.dim(e.Content))
		o.midLine = !strings.HasSuffix(e.Content, "\n")
	case state.EventToolCall:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s (%s)\n", o.bold("[tool]"), e.ToolName, e.ToolStatus)
	case state.EventToolResult:
		o.breakLine()
		fmt.Fprintf(o.Out, "  -> %s %s%s\n", e.ToolName, e.ToolStatus, fold(e.Content))
	case state.EventPermissionRequest:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s\n", o.bold("[permission]"), e.ToolName)
	case state.EventPermissionResolved:
		o.breakLine()
		fmt.Fprintf(o.Out, "  -> %s\n", e.Content)
	case state.EventPlan:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s\n", o.bold("[plan]"), string(e.Data))
	case state.EventMarker:
		o.breakLine()
		fmt.Fprintf(o.Err, "%s %s\n", markerPrefix(e.Severity), e.Summary)
	case state.EventTurnEnded:
		o.breakLine()
		if e.StopReason != state.StopEndTurn {
			fmt.Fprintf(o.Err, "%s\n", o.dim("(turn ended: "+e.StopReason+")"))
		}
	case state.EventAgentStarted:
		o.breakLine()
		msg := "agent started (pid " + fmt.Sprint(e.PID) + ", restore: " + e.Restore
		if e.FallbackReason != "" {
			msg += ", after " + e.FallbackReason
		}
		fmt.Fprintln(o.Err, o.dim(msg+")"))
	}
}

// Finish ends a stream: completes a line, and in quiet mode prints the final assistant text.
func (o *Output) Finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Quiet && !o.JSON {
		if t := o.finalText.String(); t != "" {
			fmt.Fprintln(o.Out, strings.TrimRight(t, "\n"))
		}
		return
	}
	o.breakLine()
}

func markerPrefix(sev string) string {
	switch sev {
	case "error":
		return "error:"
	case "warning":
		return "warning:"
	}
	return "note:"
}

// fold shows the first line of long tool output and how much was folded.
func fold(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	first := lines[0]
	first = history.Clip(first, 100)
	if len(lines) > 1 {
		return fmt.Sprintf(": %s (+%d more lines)", first, len(lines)-1)
	}
	return ": " + first
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
