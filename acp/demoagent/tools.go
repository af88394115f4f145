package demoagent

import (
	"errors"
	"fmt"
	"path/filepath"

	acp "github.com/coder/acp-go-sdk"
)

// The read and edit tool calls: files through the client, edits after a
// permission request.

func (t *turn) nextCallID() string {
	t.s.file.LastCall++
	return fmt.Sprintf("call-%d", t.s.file.LastCall)
}

// abs resolves a path the way the user meant it: relative to the session cwd.
func (t *turn) abs(path string) string {
	if filepath.IsAbs(path) || t.s.file.Cwd == "" {
		return path
	}
	return filepath.Join(t.s.file.Cwd, path)
}

// finish reports a tool call's outcome. After a cancel it still goes out
// (while the client is connected) so the client is not left with a pending
// tool call.
func (t *turn) finish(id string, status acp.ToolCallStatus, text string) error {
	ctx := t.ctx
	if ctx.Err() != nil {
		ctx = t.a.alive
	}
	if err := t.emit(ctx, entry{Role: roleToolResult, ToolCallID: id, Status: string(status), Text: text}); err != nil {
		return err
	}
	return t.ctx.Err()
}

func (t *turn) read(path string) error {
	id, abs := t.nextCallID(), t.abs(path)
	err := t.emit(t.ctx, entry{Role: roleToolCall, ToolCallID: id, Title: "Read " + path,
		Kind: string(acp.ToolKindRead), Status: string(acp.ToolCallStatusPending),
		Path: abs, RawInput: map[string]string{"path": path}})
	if err != nil {
		return err
	}
	content, err := t.readFile(abs)
	if err != nil {
		if err := t.finish(id, acp.ToolCallStatusFailed, errText(err)); err != nil {
			return err
		}
		return t.message(roleAgent, fmt.Sprintf("Could not read %s: %s", path, errText(err)))
	}
	if err := t.finish(id, acp.ToolCallStatusCompleted, content); err != nil {
		return err
	}
	return t.message(roleAgent, fmt.Sprintf("Read %d bytes from %s.", len(content), path))
}

func (t *turn) readFile(abs string) (string, error) {
	t.a.mu.Lock()
	ok := t.a.fs.ReadTextFile
	t.a.mu.Unlock()
	if !ok {
		return "", errors.New("the client does not support fs/read_text_file")
	}
	resp, err := t.a.client().ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: acp.SessionId(t.s.file.ID), Path: abs})
	return resp.Content, err
}

func (t *turn) write(path, content string) error {
	id, abs := t.nextCallID(), t.abs(path)
	title, input := "Write "+path, map[string]string{"path": path, "content": content}
	err := t.emit(t.ctx, entry{Role: roleToolCall, ToolCallID: id, Title: title,
		Kind: string(acp.ToolKindEdit), Status: string(acp.ToolCallStatusPending),
		Path: abs, RawInput: input})
	if err != nil {
		return err
	}
	if !t.allowed(acp.ToolKindEdit, id, title, abs, input) {
		if err := t.finish(id, acp.ToolCallStatusFailed, "Permission denied"); err != nil {
			return err
		}
		return t.message(roleAgent, fmt.Sprintf("Permission denied: %s was not written.", path))
	}
	if err := t.writeFile(abs, content); err != nil {
		if err := t.finish(id, acp.ToolCallStatusFailed, errText(err)); err != nil {
			return err
		}
		return t.message(roleAgent, fmt.Sprintf("Could not write %s: %s", path, errText(err)))
	}
	if err := t.finish(id, acp.ToolCallStatusCompleted, fmt.Sprintf("Wrote %d bytes.", len(content))); err != nil {
		return err
	}
	return t.message(roleAgent, fmt.Sprintf("Wrote %d bytes to %s.", len(content), path))
}

// allowed asks the client; anything but an explicit "allow" or
// "allow_always" is a refusal. After "allow_always" the session's writes
// are not asked about again while this agent process runs.
func (t *turn) allowed(kind acp.ToolKind, id, title, abs string, input map[string]string) bool {
	t.a.mu.Lock()
	always := t.s.alwaysAllow && kind == acp.ToolKindEdit
	t.a.mu.Unlock()
	if always {
		return true
	}
	var where []acp.ToolCallLocation
	if abs != "" {
		where = []acp.ToolCallLocation{{Path: abs}}
	}
	resp, err := t.a.client().RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(t.s.file.ID),
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: acp.ToolCallId(id),
			Title:      acp.Ptr(title),
			Kind:       acp.Ptr(kind),
			Status:     acp.Ptr(acp.ToolCallStatusPending),
			Locations:  where,
			RawInput:   input,
		},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "allow_always", Name: "Always allow writes", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil || resp.Outcome.Selected == nil {
		return false
	}
	switch resp.Outcome.Selected.OptionId {
	case "allow":
		return true
	case "allow_always":
		if kind == acp.ToolKindEdit {
			t.a.mu.Lock()
			t.s.alwaysAllow = true
			t.a.mu.Unlock()
		}
		return true
	}
	return false
}

func (t *turn) writeFile(abs, content string) error {
	t.a.mu.Lock()
	ok := t.a.fs.WriteTextFile
	t.a.mu.Unlock()
	if !ok {
		return errors.New("the client does not support fs/write_text_file")
	}
	_, err := t.a.client().WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: acp.SessionId(t.s.file.ID), Path: abs, Content: content})
	return err
}

// errText prefers the JSON-RPC message and details over the SDK's JSON dump.
func errText(err error) string {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	if m, ok := re.Data.(map[string]any); ok {
		for _, k := range []string{"details", "error", "message"} {
			if s, ok := m[k].(string); ok && s != "" {
				return re.Message + ": " + s
			}
		}
	}
	return re.Message
}
