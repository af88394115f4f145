// Package editor serves kandev to editors as an ACP agent on stdio, so any
// agent kandev runs gets durable sessions in any editor that speaks ACP.
//
// It guarantees:
//   - the session id an editor sees is the kandev session id, so the shell
//     (kandev list, status, prompt, transcript) and the editor name the same
//     session;
//   - every turn runs through kandev's owner (owner.Dial: here, or the inbox of
//     the process that owns the session), under every rule a shell prompt
//     runs under: the log, leases, repair and one automatic continuation;
//   - what the editor is shown is read from the log, after it is written and
//     redacted: live updates come from the owner's logged events, a load
//     replays the stored log;
//   - the editor going away (stdin closed) is a hang-up, not a cancel: a
//     running turn is carried to its end before the process exits.
package editor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// Options is what the editor front needs from the command that runs it.
type Options struct {
	Home   *state.Home
	Config *config.Config
	// Agent is the agent of new sessions (--agent); "" lets the editor name
	// one (_meta.kandev.agent), else the configured default.
	Agent string
	// Holder is the attach holder prompts are checked against.
	Holder string
	// Job fills an owner job for session id: profile, permission mode, abort.
	Job func(id string) (owner.Job, error)
	// Ctx ends when kandev is interrupted or terminated; running owners see it.
	Ctx context.Context
	// PageSize is how many sessions one session/list page holds (default 50).
	PageSize int
	// Log receives diagnostics (never the protocol stream); may be nil.
	Log io.Writer
}

// Serve speaks ACP on r/w until the editor closes the connection or
// opts.Ctx ends, then waits for every session's owner to finish: a running
// turn ends normally after a hang-up; after SIGTERM or SIGINT the owners
// stop it as they do in a shell. It returns opts.Ctx's cause when it ended.
func Serve(opts Options, r io.Reader, w io.Writer) error {
	if opts.PageSize <= 0 {
		opts.PageSize = defaultPageSize
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	srv := &server{opts: opts, sessions: map[string]*session{}, ready: make(chan struct{})}
	wi := newWire(w, srv.logf)
	wi.caps = &srv.caps
	srv.wire = wi
	srv.conn = sdk.NewAgentSideConnection(srv, wi, wi.in)
	// The SDK's diagnostics go to the log, never to stdout (the protocol
	// stream). Set before the wire feeds the SDK its first line, as
	// SetLogger is not synchronised with its reader.
	srv.conn.SetLogger(slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	wi.start(r)
	close(srv.ready)
	select {
	case <-srv.conn.Done():
	case <-opts.Ctx.Done():
	}
	// What the editor sent before it hung up is answered first: a prompt
	// runs to its end, a session/new gets its session.
	drained := make(chan struct{})
	go func() {
		wi.drain(true, 0)
		close(drained)
	}()
	select {
	case <-drained:
	case <-opts.Ctx.Done():
	}
	srv.closeAll()
	if opts.Ctx.Err() != nil {
		wi.drain(false, 2*time.Second) // the answers of the turns the signal stopped
		return context.Cause(opts.Ctx)
	}
	return nil
}

// server implements the agent side of ACP.
type server struct {
	opts  Options
	conn  *sdk.AgentSideConnection
	ready chan struct{} // closed once conn is set
	caps  editorCaps    // what the editor declared (published.go)
	wire  *wire         // the editor's end, for what the SDK does not type (children.go)

	mu       sync.Mutex
	sessions map[string]*session // opened on this connection
	children map[string]string   // child session id shown to the editor → its parent's (cancel_child.go)
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

func (srv *server) client() *sdk.AgentSideConnection {
	<-srv.ready
	return srv.conn
}

func (srv *server) logf(format string, args ...any) {
	fmt.Fprintf(srv.opts.Log, "kandev acp: "+format+"\n", args...)
}

// Initialize advertises what kandev gives every agent (load, resume, list,
// close) and the prompt capabilities of the agent behind.
func (srv *server) Initialize(ctx context.Context, req sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	name := srv.opts.Agent
	if name == "" {
		name, _ = acp.DefaultAgent(srv.opts.Config)
	}
	// Not cut short when the editor hangs up right after asking.
	prompts, mcp := promptCapabilities(context.WithoutCancel(ctx), srv.opts, name)
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "kandev", Version: acp.Version},
		AuthMethods:     []sdk.AuthMethod{},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			SessionCapabilities: sdk.SessionCapabilities{
				Resume: &sdk.SessionResumeCapabilities{},
				List:   &sdk.SessionListCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
			},
			PromptCapabilities: prompts,
			McpCapabilities:    mcp,
		},
	}, nil
}

// Logout is not offered: the agent behind keeps its own account.
func (srv *server) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	return sdk.LogoutResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodLogout)
}

// Authenticate has nothing to do: the agent behind authenticates on its own.
func (srv *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession creates a kandev session and starts its agent.
func (srv *server) NewSession(ctx context.Context, req sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	agent := srv.opts.Agent
	if agent == "" {
		agent = metaAgent(req.Meta)
	}
	if agent == "" {
		agent, _ = acp.DefaultAgent(srv.opts.Config)
	}
	if _, err := acp.LookupProfile(srv.opts.Config, agent); err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	cwd, err := sessionCwd(req.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	servers, err := editorServers(req.McpServers, "session/new")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s := owner.NewSessionRecord(time.Now(), cwd, agent, "", "", "")
	// The config's [agents.NAME] setup, the editor's mcpServers added to it.
	if s.Setup, s.MCPConfig, err = setup.Initial(srv.opts.Config, agent, setup.Flags{MCP: servers}); err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := srv.opts.Home.CreateSession(s); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if err := owner.LogNewSetup(srv.opts.Home, s); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	sess := srv.open(s.ID)
	if err := sess.restore(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a, _ := sess.agentSetup()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.ID), Modes: a.Modes, ConfigOptions: sess.optionsShown(a)}, nil
}

// LoadSession replays the stored conversation, then restores the agent.
func (srv *server) LoadSession(ctx context.Context, req sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	sess, s, err := srv.find(req.SessionId)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := srv.takeServers(sess.id, req.McpServers, "session/load"); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := sess.replay(context.WithoutCancel(ctx)); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if !state.IsTerminal(s.State) {
		if err := sess.restore(); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	a, _ := sess.agentSetup()
	return sdk.LoadSessionResponse{Modes: a.Modes, ConfigOptions: sess.optionsShown(a)}, nil
}

// ResumeSession restores the agent without replaying the conversation.
func (srv *server) ResumeSession(ctx context.Context, req sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	sess, s, err := srv.find(req.SessionId)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	if err := srv.takeServers(sess.id, req.McpServers, "session/resume"); err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	if !state.IsTerminal(s.State) {
		if err := sess.restore(); err != nil {
			return sdk.ResumeSessionResponse{}, err
		}
	}
	a, _ := sess.agentSetup()
	return sdk.ResumeSessionResponse{Modes: a.Modes, ConfigOptions: sess.optionsShown(a)}, nil
}

// CloseSession cancels a running turn and releases the agent; the session
// stays resumable.
func (srv *server) CloseSession(ctx context.Context, req sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	id := string(req.SessionId)
	srv.mu.Lock()
	sess := srv.sessions[id]
	delete(srv.sessions, id)
	srv.mu.Unlock()
	if sess != nil {
		sess.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions lists kandev sessions, newest activity first.
func (srv *server) ListSessions(ctx context.Context, req sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	all, err := srv.opts.Home.ListSessions()
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	cwd, cursor := "", ""
	if req.Cwd != nil {
		cwd = filepath.Clean(*req.Cwd)
	}
	if req.Cursor != nil {
		cursor = *req.Cursor
	}
	page, next, err := listPage(all, cwd, cursor, srv.opts.PageSize, resolvedDirs())
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	if next != "" {
		resp.NextCursor = &next
	}
	for _, s := range page {
		resp.Sessions = append(resp.Sessions, sessionInfo(s))
	}
	return resp, nil
}

// Prompt runs one turn of the session.
func (srv *server) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	sess, _, err := srv.find(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text := promptText(req.Prompt)
	if text == "" {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "empty prompt: kandev sends text and embedded resources to the agent"})
	}
	if err := state.CheckPrompt(text); err != nil {
		srv.logf("kandev acp: %v", err)
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32602, Message: "Invalid params: " + err.Error()}
	}
	if key := metaKey(req.Meta); key != "" {
		return sess.promptOnce(text, key)
	}
	return sess.prompt(text)
}

// Cancel asks whichever process owns the session to cancel its running
// turn; for a child session the editor was shown, to cancel that child.
func (srv *server) Cancel(ctx context.Context, n sdk.CancelNotification) error {
	id := string(n.SessionId)
	srv.mu.Lock()
	sess, parent := srv.sessions[id], srv.children[id]
	srv.mu.Unlock()
	switch {
	case sess != nil:
		sess.cancel()
	case parent != "":
		srv.cancelChild(parent, id) // cancel_child.go
	default:
		srv.logf("session/cancel of %s ignored: no session of this connection, nor a child of one, has that id", id)
	}
	return nil
}

// find returns the session id names, opening it on this connection when it
// exists in the home but was not opened yet.
func (srv *server) find(id sdk.SessionId) (*session, *state.Session, error) {
	s, err := srv.opts.Home.LoadSession(string(id))
	if errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrInvalidID) {
		return nil, nil, &sdk.RequestError{Code: -32002, Message: "Resource not found: session " + string(id)}
	}
	if err != nil {
		return nil, nil, err
	}
	return srv.open(s.ID), s, nil
}

func (srv *server) open(id string) *session {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if s := srv.sessions[id]; s != nil {
		return s
	}
	s := &session{id: id, srv: srv}
	srv.sessions[id] = s
	return s
}

// closeAll releases every session's owner and waits for them: a running
// turn finishes first (or is stopped, when opts.Ctx ended).
func (srv *server) closeAll() {
	srv.mu.Lock()
	all := make([]*session, 0, len(srv.sessions))
	for _, s := range srv.sessions {
		all = append(all, s)
	}
	srv.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.release()
		}()
	}
	wg.Wait()
}

// metaAgent reads _meta.kandev.agent.
func metaAgent(meta map[string]any) string {
	k, _ := meta["kandev"].(map[string]any)
	a, _ := k["agent"].(string)
	return a
}

func sessionCwd(cwd string) (string, error) {
	if cwd == "" {
		return os.Getwd()
	}
	if !filepath.IsAbs(cwd) {
		return "", sdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path, got " + cwd})
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return "", sdk.NewInvalidParams(map[string]any{"error": "cwd is not a directory: " + cwd})
	}
	return filepath.Clean(cwd), nil
}

// sessionInfo is a kandev session as session/list shows it.
func sessionInfo(s *state.Session) sdk.SessionInfo {
	info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: s.Cwd,
		Meta: map[string]any{"kandev": map[string]any{"agent": s.Agent, "state": s.State}}}
	if s.Title != "" {
		title := history.Redact(s.Title)
		info.Title = &title
	}
	if !s.LastActivityAt.IsZero() {
		at := s.LastActivityAt.UTC().Format(time.RFC3339)
		info.UpdatedAt = &at
	}
	return info
}
