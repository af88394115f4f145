// Command floor is the smallest useful ACP client: it launches an agent,
// initializes it, restores one existing agent session (session/resume when
// advertised, else session/load), runs one prompt turn and prints the answer.
// It keeps nothing on disk. scripts/bench.sh measures kandev prompt against
// it: what kandev adds on top of the protocol itself is durability.
//
//	floor [-cwd DIR] [-load] -session TOKEN PROMPT -- AGENT [ARGS...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	cwd, _ := os.Getwd()
	flag.StringVar(&cwd, "cwd", cwd, "the session's working directory")
	token := flag.String("session", "", "the agent's session id to restore (required)")
	forceLoad := flag.Bool("load", false, "restore with session/load even when resume is advertised")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: floor [-cwd DIR] [-load] -session TOKEN PROMPT -- AGENT [ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if *token == "" || sep < 1 || sep == len(args)-1 {
		flag.Usage()
		os.Exit(2)
	}
	prompt, agent := strings.Join(args[:sep], " "), args[sep+1:]

	cmd := exec.Command(agent[0], agent[1:]...)
	cmd.Dir, cmd.Stderr = cwd, os.Stderr
	dieWithParent(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	defer stop(cmd, stdin)

	cl := &client{}
	conn := sdk.NewClientSideConnection(cl, stdin, stdout)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	init, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
		ClientInfo:         &sdk.Implementation{Name: "floor", Version: "0"},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	id := sdk.SessionId(*token)
	switch {
	case init.AgentCapabilities.SessionCapabilities.Resume != nil && !*forceLoad:
		_, err = conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
	case init.AgentCapabilities.LoadSession:
		cl.setReplaying(true) // the replayed conversation is not part of this turn's answer
		_, err = conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
		cl.setReplaying(false)
	default:
		return errors.New("the agent advertises neither session/resume nor session/load")
	}
	if err != nil {
		return fmt.Errorf("restore session %s: %w", *token, err)
	}
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(prompt)}})
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	fmt.Println(cl.answer())
	if resp.StopReason != sdk.StopReasonEndTurn {
		fmt.Fprintln(os.Stderr, "floor: stop reason", resp.StopReason)
	}
	return nil
}

// stop closes the agent's stdin and waits a moment for it to exit, then kills it.
func stop(cmd *exec.Cmd, stdin io.Closer) {
	_ = stdin.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// client collects the assistant's text; files and permissions are refused,
// since the benchmark turn needs neither.
type client struct {
	mu        sync.Mutex
	replaying bool
	text      strings.Builder
}

func (c *client) setReplaying(on bool) {
	c.mu.Lock()
	c.replaying = on
	c.mu.Unlock()
}

func (c *client) answer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
		c.mu.Lock()
		if !c.replaying {
			c.text.WriteString(m.Content.Text.Text)
		}
		c.mu.Unlock()
	}
	return nil
}

func (c *client) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsReadTextFile)
}

func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsWriteTextFile)
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalWaitForExit)
}
