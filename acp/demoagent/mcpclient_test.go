package demoagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServerEnv, when set, makes the test binary the MCP server it names
// (see runTestMCPServer) instead of running the tests.
const testServerEnv = "DEMOAGENT_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if kind, ok := os.LookupEnv(testServerEnv); ok {
		os.Exit(runTestMCPServer(kind))
	}
	os.Exit(m.Run())
}

type textArgs struct {
	Text string `json:"text"`
}

type noArgs struct{}

// runTestMCPServer is an MCP server on stdio written with the official MCP
// SDK, or one that misbehaves:
//
//	tools    five tools over three pages (echo, fail, ask, more, last)
//	garbage  the tools server, after a line on stdout that is not JSON-RPC
//	exit     exits at once with status 3
//	silent   reads nothing, answers nothing and ignores the end of stdin
func runTestMCPServer(kind string) int {
	switch kind {
	case "exit":
		return 3
	case "silent":
		time.Sleep(time.Hour)
		return 0
	case "garbage":
		fmt.Println("notes server listening")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tools", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: 2})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "you said: "},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			&mcp.TextContent{Text: in.Text},
		}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, textArgs) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it failed on purpose")
	})
	// ask pings the client, asks for its roots (which it does not offer)
	// and adds a tool, which sends notifications/tools/list_changed.
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		ping := "ok"
		if err := req.Session.Ping(ctx, nil); err != nil {
			ping = err.Error()
		}
		roots := "offered"
		//lint:ignore SA1019 roots/list stands for any request the client does not serve (deprecated, still sent by servers)
		if _, err := req.Session.ListRoots(ctx, nil); err != nil {
			roots = err.Error()
		}
		mcp.AddTool(s, &mcp.Tool{Name: "added"}, func(context.Context, *mcp.CallToolRequest, textArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ping: " + ping + "; roots: " + roots}}}, nil, nil
	})
	for _, name := range []string{"more", "last"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, textArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testServerCmd runs the test binary as the MCP server kind.
func testServerCmd(kind string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	// A race-enabled binary sleeps 1 s at exit by default, which close
	// would take for a server that does not exit.
	cmd.Env = append(os.Environ(), testServerEnv+"="+kind, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	return cmd
}

func toolNames(tools []mcpTool) string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, ", ")
}

func TestMCPClient_ListsEveryPageAndCallsTools(t *testing.T) {
	cmd := testServerCmd("tools")
	c, err := startMCP(ctx(t), cmd)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.listTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tools); got != "ask, echo, fail, last, more" {
		t.Fatalf("tools/list over pages of 2 = %q", got)
	}

	for _, tc := range []struct {
		tool, text, want string
		isError          bool
	}{
		{"echo", "hello", "you said: hello", false},
		{"fail", "", "it failed on purpose", true},
	} {
		got, isError, err := c.callTool(ctx(t), tc.tool, map[string]any{"text": tc.text})
		if err != nil || got != tc.want || isError != tc.isError {
			t.Errorf("tools/call %s = %q, isError %v, %v; want %q, isError %v", tc.tool, got, isError, err, tc.want, tc.isError)
		}
	}
	got, _, err := c.callTool(ctx(t), "ask", nil)
	if err != nil || !strings.HasPrefix(got, "ping: ok; roots: ") || !strings.Contains(got, "Method not found") {
		t.Errorf("a server's ping and roots/list: %q, %v (want ping answered, roots/list method not found)", got, err)
	}
	// The notifications/tools/list_changed that ask caused was ignored,
	// and the connection still serves.
	if tools, err := c.listTools(ctx(t)); err != nil || !strings.Contains(toolNames(tools), "added") {
		t.Errorf("tools/list after ask = %q, %v", toolNames(tools), err)
	}
	if _, _, err := c.callTool(ctx(t), "nosuch", nil); err == nil || !strings.HasPrefix(err.Error(), "tools/call: ") || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("tools/call of an unknown tool: %v", err)
	}

	c.close()
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("the server did not exit cleanly when its stdin was closed: %v", cmd.ProcessState)
	}
}

func TestMCPClient_BrokenServersFailClearlyAndAreReaped(t *testing.T) {
	for _, tc := range []struct {
		kind, want string
		within     time.Duration
	}{
		{"exit", "initialize: the server exited (exit status 3) without answering", 5 * time.Second},
		{"garbage", `initialize: the server wrote what is not JSON-RPC to its stdout: "notes server listening"`, 5 * time.Second},
		// Killed 1 s after its stdin is closed.
		{"silent", "initialize: no answer within 500ms", 5 * time.Second},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			c, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, errors.New("no answer within 500ms"))
			defer cancel()
			cmd := testServerCmd(tc.kind)
			began := time.Now()
			client, err := startMCP(c, cmd)
			took := time.Since(began)
			if err == nil {
				client.close()
				t.Fatal("startMCP succeeded")
			}
			if err.Error() != tc.want {
				t.Errorf("error = %q, want %q", err, tc.want)
			}
			if took > tc.within {
				t.Errorf("startMCP took %v (want under %v)", took, tc.within)
			}
			if cmd.ProcessState == nil {
				t.Error("the server was not reaped")
			}
		})
	}
}

func TestMCPClient_StartFailureIsReported(t *testing.T) {
	_, err := startMCP(ctx(t), exec.Command("/nonexistent/mcp-server"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Fatalf("startMCP of a missing command: %v", err)
	}
}

// The directives over the client: /tools names every stdio server's tools
// and the servers it skipped, /mcp calls one and reports isError as a
// failed tool call, and a broken server is a clear message.
func TestSetup_ToolsAndMCPDirectivesUseTheStdioServers(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir()}, newClient(true))
	server := func(name, kind string) acp.McpServer {
		return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: os.Args[0], Args: []string{}, Env: []acp.EnvVariable{{Name: testServerEnv, Value: kind}}}}
	}
	resp, err := p.NewSession(ctx(t), acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{
		{Http: &acp.McpServerHttpInline{Name: "web", Type: "http", Url: "http://127.0.0.1:1/mcp", Headers: []acp.HttpHeader{}}},
		server("tools", "tools"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	const wantTools = "MCP tools: tools/ask, tools/echo, tools/fail, tools/last, tools/more (not connected, I speak MCP over stdio only: web (http))"
	if _, us := p.prompt(t, id, "/tools"); agentText(us) != wantTools {
		t.Errorf("/tools = %q, want %q", agentText(us), wantTools)
	}
	for _, tc := range []struct{ line, want string }{
		{"/mcp tools/echo hi there", `call-1 completed ["you said: hi there"]`},
		{`/mcp echo {"text": "json"}`, `call-2 completed ["you said: json"]`},
		{"/mcp fail x", `call-3 failed ["it failed on purpose"]`},
		{"/mcp nosuch x", `call-4 failed ["no MCP server I was given has a tool nosuch"]`},
		{"/mcp web/echo x", `call-5 failed ["no MCP server I was given has a tool echo"]`},
	} {
		_, us := p.prompt(t, id, tc.line)
		ev := toolEvents(us)
		if len(ev) != 2 || ev[1] != tc.want {
			t.Errorf("%s: tool events %q, want the result %q", tc.line, ev, tc.want)
		}
	}

	broken := p.newSessionWith(t, server("bad", "exit"))
	const wantBroken = "I could not list the MCP tools: MCP server bad: initialize: the server exited (exit status 3) without answering"
	if _, us := p.prompt(t, broken, "/tools"); agentText(us) != wantBroken {
		t.Errorf("/tools with a server that exits = %q, want %q", agentText(us), wantBroken)
	}
	_, us := p.prompt(t, broken, "/mcp echo x")
	if ev := toolEvents(us); len(ev) != 2 || !strings.Contains(ev[1], "failed") || !strings.Contains(ev[1], "MCP server bad: initialize: the server exited") {
		t.Errorf("/mcp with a server that exits: %q", ev)
	}
}

func (p *peer) newSessionWith(t *testing.T, servers ...acp.McpServer) acp.SessionId {
	t.Helper()
	resp, err := p.NewSession(ctx(t), acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: servers})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}
