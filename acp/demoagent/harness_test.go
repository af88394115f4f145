package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// testClient is an ACP client that records what the agent sends, answers
// permission requests with a fixed choice and serves fs requests from disk.
type testClient struct {
	allow bool // answer permission requests with "allow" rather than "reject"

	mu          sync.Mutex
	processed   sync.Cond // signalled when handled grows
	handled     int       // session/update notifications handled so far
	updates     []acp.SessionUpdate
	permissions []acp.RequestPermissionRequest
}

func newClient(allow bool) *testClient {
	c := &testClient{allow: allow}
	c.processed.L = &c.mu
	return c
}

var _ acp.Client = (*testClient)(nil)

func (c *testClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.handled++
	c.processed.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *testClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	c.mu.Unlock()
	id := acp.PermissionOptionId("reject")
	if c.allow {
		id = "allow"
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: id, Outcome: "selected"},
	}}, nil
}

func (c *testClient) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	return acp.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *testClient) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o600)
}

func (c *testClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *testClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *testClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *testClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *testClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// take returns the updates recorded so far and forgets them.
func (c *testClient) take() []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

// readWindow is how many session/update notifications the client may have
// read but not yet handled.
const readWindow = 256

// gate stops the client from reading far ahead of what it has handled.
//
// The SDK client parses incoming lines faster than it handles notifications
// and drops the connection once 1024 of them are queued, so a client that
// reads greedily can lose a long burst when it gets little CPU (as under a
// loaded "go test ./..."). Holding the reader back turns that into pipe
// backpressure on the agent, like a real well-behaved client.
type gate struct {
	r    *bufio.Reader
	c    *testClient
	sent int
	line []byte
}

func (g *gate) Read(p []byte) (int, error) {
	if len(g.line) == 0 {
		line, err := g.r.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		if bytes.Contains(line, []byte(`"method":"session/update"`)) {
			g.sent++
			g.c.mu.Lock()
			for g.c.handled < g.sent-readWindow {
				g.c.processed.Wait()
			}
			g.c.mu.Unlock()
		}
		g.line = line
	}
	n := copy(p, g.line)
	g.line = g.line[n:]
	return n, nil
}

// peer is a running agent and the client connected to it.
type peer struct {
	*acp.ClientSideConnection
	client *testClient
	init   acp.InitializeResponse
	stop   func() error // disconnects and returns Run's result
}

// start runs the agent in-process over pipes and initializes a client with
// fs capabilities.
func start(t *testing.T, opts Options, c *testClient) *peer {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), opts, agentIn, agentOut) }()

	conn := acp.NewClientSideConnection(c, clientOut, &gate{r: bufio.NewReader(clientIn), c: c})
	conn.SetLogger(slog.New(slog.DiscardHandler))
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			clientOut.Close()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				runErr = errors.New("Run did not return after the client disconnected")
			}
			agentOut.Close()
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })

	init, err := conn.Initialize(ctx(t), acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
	})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &peer{ClientSideConnection: conn, client: c, init: init, stop: stop}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return c
}

func (p *peer) newSession(t *testing.T, cwd string) acp.SessionId {
	t.Helper()
	resp, err := p.NewSession(ctx(t), acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

// prompt runs a turn and returns its stop reason and the updates it produced.
func (p *peer) prompt(t *testing.T, id acp.SessionId, text string) (acp.StopReason, []acp.SessionUpdate) {
	t.Helper()
	p.client.take()
	resp, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return resp.StopReason, p.client.take()
}

// agentText concatenates the agent message chunks, the way a client shows them.
func agentText(us []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func thoughtText(us []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil {
			b.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func countAgentChunks(us []acp.SessionUpdate) int {
	n := 0
	for _, u := range us {
		if u.AgentMessageChunk != nil {
			n++
		}
	}
	return n
}
