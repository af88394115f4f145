package commands

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
)

// Output is the one writer for text and JSON. Streaming commands hand it
// events; others hand it one object. Terminal detection decides colors only,
// per stream: Color for what goes to Out, ErrColor for what goes to Err.
type Output struct {
	Out, Err io.Writer
	JSON     bool
	Quiet    bool
	Color    bool
	ErrColor bool

	mu        sync.Mutex
	midLine   bool   // the last text written did not end a line
	lastKind  string // type of the last event rendered
	lastCall  string // tool call id of the last tool_call rendered
	finalText strings.Builder
	// lead is a line for Out held until the agent has started (kandev
	// start's session id): a start whose agent cannot launch prints only
	// its error, which names the session.
	lead string
}

// Lead holds line (text mode only) until the agent_started event of the
// stream, or ShowLead.
func (o *Output) Lead(line string) {
	if !o.JSON {
		o.lead = line
	}
}

// ShowLead prints the held lead line now, if it is still held.
func (o *Output) ShowLead() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.showLead()
}

// leadHeld reports whether the lead line is still held (never shown).
func (o *Output) leadHeld() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lead != ""
}

func (o *Output) showLead() {
	if o.lead != "" {
		fmt.Fprintln(o.Out, o.lead)
		o.lead = ""
	}
}

// Object prints v as one JSON object (JSON mode) or calls text with a
// writer that escapes control characters (the JSON keeps the data as it is).
func (o *Output) Object(v any, text func(w io.Writer)) {
	if o.JSON {
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return
	}
	// One write per 64 KiB, not per cell: a list of thousands of rows.
	bw := bufio.NewWriterSize(o.Out, 64<<10)
	text(printableWriter{bw})
	_ = bw.Flush()
}

// ObjectPainted is Object for text that carries kandev's own colours: text
// gets the stream unescaped (the escaping would print the colour codes as
// \x1b[1m), so it must pass every stored string through printableLine itself.
func (o *Output) ObjectPainted(v any, text func(w io.Writer)) {
	if o.JSON {
		o.Object(v, nil)
		return
	}
	bw := bufio.NewWriterSize(o.Out, 64<<10)
	text(bw)
	_ = bw.Flush()
}

// Error prints err as one line on stderr and, with --json, an error object on stdout.
func (o *Output) Error(err error) {
	msg := history.Redact(err.Error())
	fmt.Fprintln(o.Err, "kandev: "+printableLine(firstLine(msg)))
	if o.JSON && !errors.Is(err, errReported) {
		_ = json.NewEncoder(o.Out).Encode(errorOutput{Error: errorInfo{Code: errorCode(err), Message: msg}})
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
	fmt.Fprintf(o.Err, o.dimErr(format)+"\n", args...)
}

// Warn prints a warning line on stderr, also in quiet mode.
func (o *Output) Warn(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.breakLine()
	fmt.Fprintln(o.Err, "warning: "+printableLine(history.Redact(firstLine(msg))))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (o *Output) dim(s string) string    { return paint(o.Color, "\x1b[2m", s) }
func (o *Output) dimErr(s string) string { return paint(o.ErrColor, "\x1b[2m", s) }
func (o *Output) bold(s string) string   { return paint(o.Color, "\x1b[1m", s) }
func (o *Output) mark(s string) string   { return paint(o.Color, "\x1b[1;7m", s) } // bold, reverse video

func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return code + s + "\x1b[0m"
}

func (o *Output) breakLine() {
	if o.midLine {
		fmt.Fprintln(o.Out)
		o.midLine = false
	}
}

// Event renders one event of a streaming command: the log line itself in
// JSON mode, a readable stream in text mode (tool calls one line each, and
// the agent's text with control characters made visible).
func (o *Output) Event(e eventlog.Event) {
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
	if e.Type == eventlog.EventAgentStarted {
		o.showLead()
	}
	if o.Quiet {
		switch e.Type {
		case eventlog.EventTurnStarted:
			o.finalText.Reset()
		case eventlog.EventAgentMessage:
			o.finalText.WriteString(e.Content)
		}
		return
	}
	o.writeEvent(e)
	o.lastKind = e.Type
}

// writeEvent is Event's text: the agent's text and thoughts as they
// stream, one line for each other kind of event (markers, turn ends and
// setup changes on stderr). o.lastKind is the kind shown before e.
func (o *Output) writeEvent(e eventlog.Event) {
	switch e.Type {
	case eventlog.EventAgentMessage:
		if o.lastKind != eventlog.EventAgentMessage {
			o.breakLine()
		}
		io.WriteString(o.Out, printable(e.Content))
		o.midLine = e.Content != "" && !strings.HasSuffix(e.Content, "\n")
		if e.Content == "" {
			o.midLine = o.midLine || o.lastKind == eventlog.EventAgentMessage
		}
	case eventlog.EventAgentThought:
		if o.lastKind != eventlog.EventAgentThought {
			o.breakLine()
			io.WriteString(o.Out, o.dim("thinking: "))
		}
		io.WriteString(o.Out, o.dim(printable(e.Content)))
		o.midLine = !strings.HasSuffix(e.Content, "\n")
	case eventlog.EventToolCall:
		// Output of the call just shown (a terminal's, as the command
		// prints it) follows its line without repeating it.
		if e.Content == "" || o.lastKind != eventlog.EventToolCall || o.lastCall != e.ToolCallID || e.ToolCallID == "" {
			o.breakLine()
			fmt.Fprintf(o.Out, "%s %s (%s)\n", o.bold("[tool]"), printableLine(e.ToolName), printableLine(e.ToolStatus))
		}
		o.lastCall = e.ToolCallID
		if e.Content != "" {
			io.WriteString(o.Out, o.dim(printable(e.Content)))
			o.midLine = !strings.HasSuffix(e.Content, "\n")
		}
	case eventlog.EventToolResult:
		o.breakLine()
		fmt.Fprintf(o.Out, "  -> %s %s%s\n", printableLine(e.ToolName), printableLine(e.ToolStatus), printableLine(fold(e.Content)))
	case eventlog.EventChildStarted, eventlog.EventChildEnded:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s\n", o.bold("[subagent]"), printableLine(childLine(e))) // children.go
	case eventlog.EventPermissionRequest:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s\n", o.bold("[permission]"), printableLine(e.ToolName))
	case eventlog.EventPermissionResolved:
		o.breakLine()
		fmt.Fprintf(o.Out, "  -> %s\n", printableLine(e.Content))
	case eventlog.EventPlan:
		o.breakLine()
		fmt.Fprintf(o.Out, "%s %s\n", o.bold("[plan]"), string(e.Data))
	case eventlog.EventMarker:
		o.breakLine()
		fmt.Fprintf(o.Err, "%s %s\n", markerPrefix(e.Severity), printableLine(e.Summary))
	case eventlog.EventTurnEnded:
		o.breakLine()
		if e.StopReason != eventlog.StopEndTurn {
			fmt.Fprintf(o.Err, "%s\n", o.dimErr("(turn ended: "+e.StopReason+")"))
		}
	case eventlog.EventSetupChanged:
		o.breakLine()
		fmt.Fprintln(o.Err, o.dimErr("setup: "+printableLine(e.Summary)+" (from "+e.Source+")"))
	case eventlog.EventAgentStarted:
		o.breakLine()
		msg := "agent started (pid " + fmt.Sprint(e.PID) + ", restore: " + e.Restore
		if e.FallbackReason != "" {
			msg += ", after " + e.FallbackReason
		}
		fmt.Fprintln(o.Err, o.dimErr(msg+")"))
	}
}

// Finish ends a stream: completes a line, and in quiet mode prints the final assistant text.
func (o *Output) Finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Quiet && !o.JSON {
		if t := o.finalText.String(); t != "" {
			fmt.Fprintln(o.Out, printable(strings.TrimRight(t, "\n")))
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

// isTerminal reports whether stream is a terminal (isatty), judged stream by
// stream: a character device such as /dev/null is not one. The descriptor is
// read through SyscallConn so its blocking mode is left alone.
func isTerminal(stream any) bool {
	if h, ok := stream.(*hangupWriter); ok {
		stream = h.w
	}
	c, ok := stream.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = raw.Control(func(fd uintptr) { tty = term.IsTerminal(int(fd)) })
	return tty
}
