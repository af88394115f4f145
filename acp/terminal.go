package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// The client's terminals (terminal/create, output, wait_for_exit, kill,
// release; see docs/agents.md). A command runs in the session's cwd when
// ConnOptions.AllowTerminal lets it; its output is kept up to the byte
// limit the agent asked for (else defaultTerminalOutput), the end kept, and
// recorded in the log as a tool call, its output as it comes (bounded,
// terminal_live.go) and its result (so it passes the owner's redaction). Every terminal still running is killed when the turn
// ends (Conn.Prompt returns) and when the agent's connection closes.

// defaultTerminalOutput bounds a terminal's kept output when the agent
// names no limit (and caps a larger one).
const defaultTerminalOutput = 1 << 20

type terminal struct {
	id     string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the command has exited
	limit  int
	mu     sync.Mutex
	out    []byte
	cut    bool // output was dropped from the start
	status sdk.TerminalExitStatus
	killed bool
	exited bool // status is set
	// groupKilled: the command's process group was killed (once).
	groupKilled bool
	command     string
	live        *liveOutput // the output recorded as it comes (terminal_live.go)
}

func (t *terminal) Write(p []byte) (int, error) {
	if t.live != nil {
		t.live.write(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, p...)
	if len(t.out) > t.limit {
		drop := len(t.out) - t.limit
		// Keep the end, starting at a character boundary.
		for drop < len(t.out) && !utf8.RuneStart(t.out[drop]) {
			drop++
		}
		t.out = append(t.out[:0], t.out[drop:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *terminal) output() sdk.TerminalOutputResponse {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := sdk.TerminalOutputResponse{Output: string(t.out), Truncated: t.cut}
	if t.exited {
		st := t.status
		r.ExitStatus = &st
	}
	return r
}

// terminals are a connection's terminals by id.
type terminals struct {
	mu   sync.Mutex
	next int
	byID map[string]*terminal
}

func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no terminal %q (released already?)", id)})
	}
	return t, nil
}

// TerminalCommandLine is how a terminal's command is shown in the log.
func TerminalCommandLine(command string, args []string) string {
	return strings.TrimSpace(command + " " + strings.Join(args, " "))
}

func (cl *client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	c := cl.c
	if c.opts.AllowTerminal == nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "this client runs no terminals here"})
	}
	if err := c.opts.AllowTerminal(); err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	dir := c.opts.Cwd
	if p.Cwd != nil && *p.Cwd != "" {
		d, err := cl.confine(*p.Cwd)
		if err != nil {
			return sdk.CreateTerminalResponse{}, err
		}
		dir = d
	}
	limit := defaultTerminalOutput
	if p.OutputByteLimit != nil && *p.OutputByteLimit >= 0 && *p.OutputByteLimit < limit {
		limit = *p.OutputByteLimit
	}
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Dir = dir
	// What the command left running in the background may hold its output
	// open: its exit is reported a moment after the command's own.
	cmd.WaitDelay = time.Second
	cmd.Env = cmd.Environ()
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	c.terms.mu.Lock()
	c.terms.next++
	id := fmt.Sprintf("term-%d", c.terms.next)
	c.terms.mu.Unlock()
	t := &terminal{id: id, cmd: cmd, done: make(chan struct{}), limit: limit, command: TerminalCommandLine(p.Command, p.Args)}
	cmd.Stdout, cmd.Stderr = t, t
	ownGroup(cmd)
	input, _ := json.Marshal(map[string]any{"command": p.Command, "args": p.Args, "cwd": dir})
	call := &eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "terminal-" + id, ToolName: "Terminal: " + t.command,
		ToolKind: string(sdk.ToolKindExecute), ToolStatus: string(sdk.ToolCallStatusInProgress), Input: input}
	c.q.Push(queued{event: call})
	t.live = newLiveOutput(*call, func(e *eventlog.Event) { c.q.Push(queued{event: e}) })
	if err := cmd.Start(); err != nil {
		c.q.Push(queued{event: &eventlog.Event{Type: eventlog.EventToolResult, ToolCallID: call.ToolCallID, ToolName: call.ToolName,
			ToolStatus: string(sdk.ToolCallStatusFailed), Content: err.Error()}})
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	c.terms.mu.Lock()
	if c.terms.byID == nil {
		c.terms.byID = map[string]*terminal{}
	}
	c.terms.byID[id] = t
	c.terms.mu.Unlock()
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		if ps := cmd.ProcessState; ps != nil {
			if code := ps.ExitCode(); code >= 0 {
				t.status.ExitCode = &code
			} else if s := exitSignal(ps); s != "" {
				t.status.Signal = &s
			}
		} else if err != nil {
			s := err.Error()
			t.status.Signal = &s
		}
		t.exited = true
		t.mu.Unlock()
		// Recorded before done closes: a turn that waits for its terminals
		// finds their output in its log.
		t.live.end()
		c.logTerminal(t)
		close(t.done)
	}()
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

// logTerminal records a terminal's output when its command has exited.
func (c *Conn) logTerminal(t *terminal) {
	r := t.output()
	t.mu.Lock()
	killed := t.killed
	t.mu.Unlock()
	status := sdk.ToolCallStatusCompleted
	data := map[string]any{"truncated": r.Truncated, "killed": killed}
	if r.ExitStatus != nil {
		if r.ExitStatus.ExitCode != nil {
			data["exit_code"] = *r.ExitStatus.ExitCode
			if *r.ExitStatus.ExitCode != 0 {
				status = sdk.ToolCallStatusFailed
			}
		}
		if r.ExitStatus.Signal != nil {
			data["signal"] = *r.ExitStatus.Signal
			status = sdk.ToolCallStatusFailed
		}
	}
	b, _ := json.Marshal(data)
	c.q.Push(queued{event: &eventlog.Event{Type: eventlog.EventToolResult, ToolCallID: "terminal-" + t.id, ToolName: "Terminal: " + t.command,
		ToolStatus: string(status), Content: r.Output, Data: b}})
}

func (cl *client) TerminalOutput(ctx context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := cl.c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	return t.output(), nil
}

func (cl *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := cl.c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return sdk.WaitForTerminalExitResponse{ExitCode: t.status.ExitCode, Signal: t.status.Signal}, nil
}

func (cl *client) KillTerminal(ctx context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := cl.c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	t.kill()
	return sdk.KillTerminalResponse{}, nil
}

func (cl *client) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := cl.c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	t.kill()
	<-t.done
	cl.c.terms.mu.Lock()
	delete(cl.c.terms.byID, p.TerminalId)
	cl.c.terms.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

// kill stops the command and whatever it started in the background.
func (t *terminal) kill() {
	t.mu.Lock()
	if t.groupKilled {
		t.mu.Unlock()
		return
	}
	t.groupKilled = true
	t.killed = t.killed || !t.exited
	t.mu.Unlock()
	killGroup(t.cmd)
}

// KillTerminals kills every terminal still running and waits until each
// has exited and its output is recorded; the agent's turn is over.
func (c *Conn) KillTerminals() {
	c.terms.mu.Lock()
	all := make([]*terminal, 0, len(c.terms.byID))
	for _, t := range c.terms.byID {
		all = append(all, t)
	}
	c.terms.mu.Unlock()
	for _, t := range all {
		t.kill()
	}
	for _, t := range all {
		<-t.done
	}
}
