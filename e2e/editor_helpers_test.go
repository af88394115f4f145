package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// editorProc is an editor driving `kandev acp` over its stdio with the ACP
// Go SDK's client side, as Zed or any SDK-based editor would.
type editorProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *sdk.ClientSideConnection
	stderr *bytes.Buffer
	exited chan struct{}
	code   int

	mu      sync.Mutex
	updates map[sdk.SessionId][]sdk.SessionUpdate
	allow   bool // how the editor answers permission requests
	always  bool // answer with the agent's allow_always option (over allow)
	asked   []sdk.RequestPermissionRequest
}

// openEditor starts kandev acp in the world's cwd.
func (w *world) openEditor(args ...string) *editorProc {
	w.t.Helper()
	cmd := exec.Command(kandevBin, append([]string{"acp"}, args...)...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	e := &editorProc{t: w.t, cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan struct{}), updates: map[sdk.SessionId][]sdk.SessionUpdate{}}
	cmd.Stderr = e.stderr
	var err error
	if e.stdin, err = cmd.StdinPipe(); err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		e.code = cmd.ProcessState.ExitCode()
		close(e.exited)
	}()
	w.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-e.exited
	})
	e.conn = sdk.NewClientSideConnection(e, e.stdin, out)
	e.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return e
}

// editorCtx bounds one request of the editor: a real agent behind kandev
// acp takes more than a minute to start on two loaded cores (OpenCode's
// session/new ran out of 60 s in CI).
func editorCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 3*time.Minute)
}

func (e *editorProc) initialize() sdk.InitializeResponse {
	e.t.Helper()
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := e.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}})
	if err != nil {
		e.t.Fatalf("initialize: %v\n%s", err, e.stderr)
	}
	return resp
}

func (e *editorProc) newSession(cwd string) sdk.SessionId {
	e.t.Helper()
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		e.t.Fatalf("session/new: %v\n%s", err, e.stderr)
	}
	return resp.SessionId
}

func (e *editorProc) load(id sdk.SessionId, cwd string) {
	e.t.Helper()
	ctx, cancel := editorCtx()
	defer cancel()
	if _, err := e.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		e.t.Fatalf("session/load: %v\n%s", err, e.stderr)
	}
}

func (e *editorProc) prompt(id sdk.SessionId, text string) (sdk.StopReason, error) {
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := e.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	return resp.StopReason, err
}

func (e *editorProc) mustPrompt(id sdk.SessionId, text string) {
	e.t.Helper()
	stop, err := e.prompt(id, text)
	if err != nil || stop != sdk.StopReasonEndTurn {
		e.t.Fatalf("prompt %q: stop %q, err %v\n%s", text, stop, err, e.stderr)
	}
}

// take returns the updates the editor got for id so far and forgets them.
func (e *editorProc) take(id sdk.SessionId) []sdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	ups := e.updates[id]
	delete(e.updates, id)
	return ups
}

// quit closes the editor's end of the pipe and waits for kandev acp to exit.
func (e *editorProc) quit() int {
	e.t.Helper()
	e.stdin.Close()
	select {
	case <-e.exited:
	case <-time.After(60 * time.Second):
		e.t.Fatalf("kandev acp did not exit after stdin closed\n%s", e.stderr)
	}
	return e.code
}

// chunkText concatenates the text of one kind of chunk: "agent", "thought" or "user".
func chunkText(ups []sdk.SessionUpdate, kind string) string {
	var b strings.Builder
	for _, u := range ups {
		var c *sdk.ContentBlock
		switch {
		case kind == "agent" && u.AgentMessageChunk != nil:
			c = &u.AgentMessageChunk.Content
		case kind == "thought" && u.AgentThoughtChunk != nil:
			c = &u.AgentThoughtChunk.Content
		case kind == "user" && u.UserMessageChunk != nil:
			c = &u.UserMessageChunk.Content
		}
		if c != nil && c.Text != nil {
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}

// The sdk.Client side of the editor.

func (e *editorProc) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates[n.SessionId] = append(e.updates[n.SessionId], n.Update)
	return nil
}

func (e *editorProc) RequestPermission(_ context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, req)
	want := sdk.PermissionOptionKindRejectOnce
	switch {
	case e.always:
		want = sdk.PermissionOptionKindAllowAlways
	case e.allow:
		want = sdk.PermissionOptionKindAllowOnce
	}
	for _, o := range req.Options {
		if o.Kind == want {
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

func (e *editorProc) ReadTextFile(_ context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	b, err := os.ReadFile(req.Path)
	return sdk.ReadTextFileResponse{Content: string(b)}, err
}

func (e *editorProc) WriteTextFile(_ context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, os.WriteFile(req.Path, []byte(req.Content), 0o600)
}

func (e *editorProc) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}

func (e *editorProc) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}

func (e *editorProc) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}

func (e *editorProc) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}

func (e *editorProc) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// sessionIDs of a list page.
func listedIDs(resp sdk.ListSessionsResponse) []string {
	var ids []string
	for _, s := range resp.Sessions {
		ids = append(ids, string(s.SessionId))
	}
	return ids
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
