package demoagent

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// runTerminal runs line in a client terminal as an execute tool call,
// asking permission first when ask is set.
func (t *turn) runTerminal(line string, ask bool) error {
	id, title := t.nextCallID(), "Run "+line
	input := map[string]string{"command": line}
	if err := t.emit(t.ctx, entry{Role: roleToolCall, ToolCallID: id, Title: title,
		Kind: string(acp.ToolKindExecute), Status: string(acp.ToolCallStatusPending), RawInput: input}); err != nil {
		return err
	}
	if ask && !t.allowed(acp.ToolKindExecute, id, title, "", input) {
		if err := t.finish(id, acp.ToolCallStatusFailed, "Permission denied"); err != nil {
			return err
		}
		return t.message(roleAgent, "Permission denied: "+line+" was not run.")
	}
	out, err := t.terminal(line)
	if err != nil {
		if err := t.finish(id, acp.ToolCallStatusFailed, errText(err)); err != nil {
			return err
		}
		return t.message(roleAgent, "Could not run "+line+": "+errText(err))
	}
	if err := t.finish(id, acp.ToolCallStatusCompleted, out); err != nil {
		return err
	}
	return t.message(roleAgent, out)
}

// terminal creates a terminal for line, waits for it, reads its output and
// releases it: "exit N: OUTPUT".
func (t *turn) terminal(line string) (string, error) {
	t.a.mu.Lock()
	ok := t.a.terminal
	t.a.mu.Unlock()
	if !ok {
		return "", errors.New("the client does not support terminals")
	}
	sid := acp.SessionId(t.s.file.ID)
	c := t.a.client()
	created, err := c.CreateTerminal(t.ctx, shellRequest(sid, line))
	if err != nil {
		return "", err
	}
	defer func() {
		_, _ = c.ReleaseTerminal(t.a.alive, acp.ReleaseTerminalRequest{SessionId: sid, TerminalId: created.TerminalId})
	}()
	exit, err := c.WaitForTerminalExit(t.ctx, acp.WaitForTerminalExitRequest{SessionId: sid, TerminalId: created.TerminalId})
	if err != nil {
		return "", err
	}
	out, err := c.TerminalOutput(t.ctx, acp.TerminalOutputRequest{SessionId: sid, TerminalId: created.TerminalId})
	if err != nil {
		return "", err
	}
	status := "killed"
	switch {
	case exit.ExitCode != nil:
		status = fmt.Sprintf("exit %d", *exit.ExitCode)
	case exit.Signal != nil:
		status = "signal " + *exit.Signal
	}
	return status + ": " + strings.TrimRight(out.Output, "\r\n"), nil
}

func shellRequest(sid acp.SessionId, line string) acp.CreateTerminalRequest {
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/c"
	}
	return acp.CreateTerminalRequest{SessionId: sid, Command: shell, Args: []string{flag, line}}
}

// leaveTerminal starts line in a client terminal and leaves it running.
func (t *turn) leaveTerminal(line string) error {
	created, err := t.a.client().CreateTerminal(t.ctx, shellRequest(acp.SessionId(t.s.file.ID), line))
	if err != nil {
		return t.message(roleAgent, "Could not run "+line+": "+errText(err))
	}
	return t.message(roleAgent, "Left "+line+" running in terminal "+created.TerminalId+".")
}
