package acp

// The ACP requests kandev sends through a Conn, and how their errors read.

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/history"
)

// Initialize performs the ACP handshake.
func (c *Conn) Initialize(ctx context.Context) (sdk.InitializeResponse, error) {
	var elicit *sdk.ElicitationCapabilities
	if c.opts.Elicit != nil {
		elicit = &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}
	}
	resp, err := c.sdk.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{
			Elicitation: elicit,
			Fs:          sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal:    c.opts.AllowTerminal != nil,
		},
		ClientInfo: &sdk.Implementation{Name: "kandev", Version: Version},
	})
	return resp, c.wrap(ctx, err)
}

// NewSession asks for a fresh agent session in cwd.
func (c *Conn) NewSession(ctx context.Context) (string, error) {
	// Until the answer names it, an update of an id kandev does not know
	// is the new session's own (Copilot sends some before it answers), not
	// a child that was never announced.
	c.parentUnknown()
	resp, err := c.sdk.NewSession(ctx, sdk.NewSessionRequest{Cwd: c.opts.Cwd, McpServers: c.mcpServers()})
	c.answered(resp.Modes, resp.ConfigOptions)
	c.setParent(string(resp.SessionId))
	return string(resp.SessionId), c.wrap(ctx, err)
}

// ResumeSession restores token without replay.
func (c *Conn) ResumeSession(ctx context.Context, token string) error {
	c.setParent(token)
	resp, err := c.sdk.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: sdk.SessionId(token), Cwd: c.opts.Cwd, McpServers: c.mcpServers()})
	c.answered(resp.Modes, resp.ConfigOptions)
	return c.wrap(ctx, err)
}

// LoadSession restores token; the agent's replay of the conversation is
// dropped, not recorded again, also the part of it the agent sends after
// its answer (until it falls silent for loadQuiet). A null result is
// accepted.
func (c *Conn) LoadSession(ctx context.Context, token string) error {
	c.setParent(token)
	c.setReplaying(replayAll)
	defer c.setReplaying(replayOff)
	resp, err := c.sdk.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(token), Cwd: c.opts.Cwd, McpServers: c.mcpServers()})
	c.answered(resp.Modes, resp.ConfigOptions)
	if err == nil {
		c.setReplaying(replayLate)
		c.awaitQuiet(ctx, loadQuiet, loadQuietMax)
	}
	// Wait for the replay to be drained before the caller records anything new.
	c.Barrier(nil)
	return c.wrap(ctx, err)
}

// Fork asks the agent for a new session that copies token's conversation
// (session/fork, unstable), in cwd; it returns the new session's token.
func (c *Conn) Fork(ctx context.Context, token string) (string, error) {
	c.parentUnknown() // as for NewSession: the fork's own updates are no child's
	resp, err := c.sdk.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: sdk.SessionId(token), Cwd: c.opts.Cwd})
	return string(resp.SessionId), c.wrap(ctx, err)
}

// Prompt runs one turn and returns the agent's stop reason. Every update the
// agent sent before answering has been handed to OnEvents when it returns.
func (c *Conn) Prompt(ctx context.Context, token, text string) (string, error) {
	c.setParent(token)
	resp, err := c.sdk.Prompt(ctx, sdk.PromptRequest{SessionId: sdk.SessionId(token), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err == nil && resp.Usage != nil {
		// The turn's token counts are logged after its updates, like one more update.
		c.q.Push(queued{event: promptUsageEvent(resp.Usage)})
	}
	// The turn is over: what it left running is killed and recorded in it.
	c.KillTerminals()
	c.Barrier(nil)
	c.ackNow()
	return string(resp.StopReason), c.wrap(ctx, err)
}

// Cancel sends session/cancel.
func (c *Conn) Cancel(token string) error {
	return c.sdk.Cancel(context.Background(), sdk.CancelNotification{SessionId: sdk.SessionId(token)})
}

// CloseSession asks the agent to close session token (session/close),
// freeing what it holds for it; the caller checks that the agent
// advertised sessionCapabilities.close.
func (c *Conn) CloseSession(ctx context.Context, token string) error {
	_, err := c.sdk.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sdk.SessionId(token)})
	return c.wrap(ctx, err)
}

// SessionListed reports whether the agent's session/list for this cwd names
// token, following its pages (at most 100).
func (c *Conn) SessionListed(ctx context.Context, token string) (bool, error) {
	cwd := c.opts.Cwd
	var cursor *string
	for page := 0; page < 100; page++ {
		resp, err := c.sdk.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &cwd, Cursor: cursor})
		if err != nil {
			return false, c.wrap(ctx, err)
		}
		for _, s := range resp.Sessions {
			if string(s.SessionId) == token {
				return true, nil
			}
		}
		if resp.NextCursor == nil || *resp.NextCursor == "" {
			return false, nil
		}
		cursor = resp.NextCursor
	}
	return false, fmt.Errorf("session/list: more than 100 pages")
}

// wrap turns a transport failure into the reason the agent went away.
func (c *Conn) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	c.gaveUp(ctx, err)
	if f := c.Fatal(); f != nil {
		return f
	}
	select {
	case <-c.Done():
		// Give the process a moment to be reaped so the exit status is known.
		select {
		case <-c.Proc.Done():
		case <-time.After(500 * time.Millisecond):
		}
		if d := c.Proc.ExitDescription(); d != "" {
			return &AgentExitError{Desc: d, Stderr: c.Proc.Stderr()}
		}
	default:
	}
	return inWords(err)
}

// AgentExitError says the agent process died while kandev waited for it.
type AgentExitError struct {
	Desc   string
	Stderr string
}

func (e *AgentExitError) Error() string {
	msg := "the agent process " + e.Desc
	if s := lastLine(e.Stderr); s != "" {
		msg += ": " + history.Clip(s, 200)
	}
	return msg
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
