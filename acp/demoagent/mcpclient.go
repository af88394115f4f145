package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/history"
)

// The demo agent's MCP client: just enough of MCP to list a stdio server's
// tools and call one. MCP's stdio transport is newline-delimited JSON-RPC
// 2.0, as ACP's is, so it runs on the ACP SDK's JSON-RPC connection.

// mcpProtocolVersion is the MCP version the demo agent asks for. A server
// answers with it or with an older version it speaks; mcpVersions are those
// whose tools/list and tools/call the demo agent reads the same way.
const mcpProtocolVersion = "2025-06-18"

var mcpVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// mcpTerminateWait is how long close waits for a server to exit on its own
// once its stdin is closed, before killing it.
const mcpTerminateWait = time.Second

// The MCP messages the demo agent sends and reads, with MCP's field names.
type (
	mcpImplementation struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	mcpInitializeParams struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Capabilities    struct{}          `json:"capabilities"`
		ClientInfo      mcpImplementation `json:"clientInfo"`
	}
	mcpInitializeResult struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	mcpListToolsParams struct {
		Cursor string `json:"cursor,omitempty"`
	}
	mcpTool struct {
		Name string `json:"name"`
	}
	mcpListToolsResult struct {
		Tools      []mcpTool `json:"tools"`
		NextCursor string    `json:"nextCursor,omitempty"`
	}
	mcpCallToolParams struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments,omitempty"`
	}
	mcpContent struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
	}
	mcpCallToolResult struct {
		Content []mcpContent `json:"content"`
		IsError bool         `json:"isError,omitempty"`
	}
)

// mcpClient is one running stdio MCP server, initialized.
type mcpClient struct {
	cmd    *exec.Cmd
	stdin  *mcpInput
	stdout *os.File
	out    *mcpOutput
	conn   *acp.Connection
	exited chan struct{} // closed once the server has exited and been reaped
}

// startMCP starts cmd (its stdin and stdout are the client's) and
// initializes it. The caller closes the client.
func startMCP(ctx context.Context, cmd *exec.Cmd) (*mcpClient, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// A pipe of our own rather than StdoutPipe: Wait, called as soon as the
	// server exits, closes StdoutPipe's end and drops what is still unread.
	stdout, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, err
	}
	c := &mcpClient{cmd: cmd, stdin: &mcpInput{w: stdin}, stdout: stdout, out: newMCPOutput(stdout), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	c.conn = acp.NewConnection(answerMCPServer, c.stdin, c.out)
	if err := c.initialize(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *mcpClient) initialize(ctx context.Context) error {
	res, err := mcpRequest[mcpInitializeResult](ctx, c, "initialize", mcpInitializeParams{
		ProtocolVersion: mcpProtocolVersion,
		ClientInfo:      mcpImplementation{Name: "kandev-demo-agent", Version: "0.1.0"},
	})
	if err != nil {
		return err
	}
	if !slices.Contains(mcpVersions, res.ProtocolVersion) {
		return fmt.Errorf("initialize: the server answered MCP version %q; the demo agent speaks %s", res.ProtocolVersion, strings.Join(mcpVersions, ", "))
	}
	if err := c.conn.SendNotification(ctx, "notifications/initialized", struct{}{}); err != nil {
		return c.failed(ctx, "notifications/initialized", err)
	}
	return nil
}

// listTools lists every tool of the server, page by page.
func (c *mcpClient) listTools(ctx context.Context) ([]mcpTool, error) {
	var tools []mcpTool
	var params mcpListToolsParams
	for {
		res, err := mcpRequest[mcpListToolsResult](ctx, c, "tools/list", params)
		if err != nil {
			return nil, err
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		if res.NextCursor == params.Cursor {
			return nil, fmt.Errorf("tools/list: the server answered cursor %q again", res.NextCursor)
		}
		params.Cursor = res.NextCursor
	}
}

// callTool calls a tool and returns the text of its result and whether the
// tool reported an error.
func (c *mcpClient) callTool(ctx context.Context, name string, arguments map[string]any) (text string, isError bool, err error) {
	res, err := mcpRequest[mcpCallToolResult](ctx, c, "tools/call", mcpCallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, item := range res.Content {
		if item.Type == "text" {
			b.WriteString(item.Text)
		}
	}
	return b.String(), res.IsError, nil
}

// close closes the server's stdin, gives it mcpTerminateWait to exit, then
// kills it; the server is reaped either way.
func (c *mcpClient) close() {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(mcpTerminateWait):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.stdout.Close()
}

// answerMCPServer answers what the server asks the demo agent: ping, and
// method not found for anything else (it offers no roots, sampling or
// elicitation). Notifications (progress, logging, list changes) are ignored.
func answerMCPServer(_ context.Context, method string, _ json.RawMessage) (any, *acp.RequestError) {
	switch {
	case method == "ping":
		return struct{}{}, nil
	case strings.HasPrefix(method, "notifications/"):
		return nil, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// mcpRequest sends one request and turns its failure into a sentence.
func mcpRequest[T any](ctx context.Context, c *mcpClient, method string, params any) (T, error) {
	res, err := acp.SendRequest[T](c.conn, ctx, method, params)
	if err != nil {
		return res, c.failed(ctx, method, err)
	}
	return res, nil
}

// failed says why method failed: the server is gone (it exited, closed its
// stdout or wrote what is not JSON-RPC there), the time ran out, or the
// server answered with an error.
func (c *mcpClient) failed(ctx context.Context, method string, err error) error {
	select {
	case <-c.conn.Done():
		return fmt.Errorf("%s: %w", method, c.gone())
	default:
	}
	if c.stdin.failed() {
		return fmt.Errorf("%s: %w", method, c.gone())
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", method, context.Cause(ctx))
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("%s: %s (error %d)", method, re.Message, re.Code)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// gone says how the server went away.
func (c *mcpClient) gone() error {
	if line := c.out.notJSONRPC(); line != "" {
		return fmt.Errorf("the server wrote what is not JSON-RPC to its stdout: %q", line)
	}
	select {
	case <-c.exited:
		return fmt.Errorf("the server exited (%s) without answering", c.cmd.ProcessState)
	case <-time.After(mcpTerminateWait):
		return errors.New("the server closed its stdin or stdout without answering")
	}
}

// mcpInput is the server's stdin; it remembers that a write failed (the
// server is gone) so the request is not reported as the server's error.
type mcpInput struct {
	w io.WriteCloser

	mu     sync.Mutex
	broken bool
}

func (in *mcpInput) Write(p []byte) (int, error) {
	n, err := in.w.Write(p)
	if err != nil {
		in.mu.Lock()
		in.broken = true
		in.mu.Unlock()
	}
	return n, err
}

func (in *mcpInput) Close() error { return in.w.Close() }

func (in *mcpInput) failed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.broken
}

// mcpOutput is the server's stdout as the connection reads it, a line at a
// time. A line that is not a JSON-RPC 2.0 message ends it: MCP forbids one,
// and the connection would skip it and leave the request waiting for its
// answer until the time runs out.
type mcpOutput struct {
	r    *bufio.Reader
	line []byte // what is left of the current line
	err  error  // what ended the stream

	mu  sync.Mutex
	bad string // the line that was not JSON-RPC
}

var errNotJSONRPC = errors.New("not a JSON-RPC message")

func newMCPOutput(r io.Reader) *mcpOutput { return &mcpOutput{r: bufio.NewReader(r)} }

func (o *mcpOutput) Read(p []byte) (int, error) {
	for len(o.line) == 0 {
		if o.err != nil {
			return 0, o.err
		}
		o.line, o.err = o.r.ReadBytes('\n')
		if !isJSONRPCLine(o.line) {
			o.mu.Lock()
			o.bad = history.Clip(strings.TrimSpace(string(o.line)), 120)
			o.mu.Unlock()
			o.line, o.err = nil, errNotJSONRPC
		}
	}
	n := copy(p, o.line)
	o.line = o.line[n:]
	return n, nil
}

// notJSONRPC is the line that ended the stream, if one did.
func (o *mcpOutput) notJSONRPC() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bad
}

// isJSONRPCLine reports whether a line of the stream is blank or a JSON
// object with "jsonrpc": "2.0" (read with gjson, as kandev reads fields,
// without decoding the message a second time).
func isJSONRPCLine(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return true
	}
	return trimmed[0] == '{' && gjson.ValidBytes(trimmed) && gjson.GetBytes(trimmed, "jsonrpc").String() == "2.0"
}
