// Package demoagent is kandev's built-in deterministic ACP agent.
//
// It speaks ACP through the SDK's agent-side connection and answers each
// prompt line by line, so tests and demos get exactly reproducible turns
// without any model:
//
//	remember WORD     "OK, I will remember WORD."
//	recall            lists every remembered WORD found in the user's text,
//	                  including history pasted into a prompt ("[USER]: remember X")
//	/say TEXT         TEXT streamed as 3-4 agent message chunks
//	/stream N TEXT    TEXT streamed in chunks of N bytes (a character is never split)
//	/think TEXT       TEXT as thought chunks
//	/read PATH        a read tool call served by the client's fs/read_text_file
//	/write PATH TEXT  an edit tool call, after session/request_permission
//	/terminal CMD     an execute tool call: asks permission, then runs CMD
//	                  (sh -c, cmd /c on Windows) in a client terminal
//	                  (terminal/create, wait_for_exit, output, release) and
//	                  reports "exit N: OUTPUT"; /terminal! CMD does not ask
//	/terminal& CMD    creates a terminal for CMD without asking and leaves it
//	                  running (neither waited for nor released)
//	/ask QUESTION     asks the person QUESTION (elicitation/create, one
//	                  string field "answer") and says "answer: VALUE", or
//	                  that the question was declined or cancelled
//	/sleep MS         a pause that session/cancel interrupts
//	/bulk N           N chunks "chunk i\n", streamed
//	/crash            "crashing now", then os.Exit(3) without answering
//	/subagent NAME TEXT
//	                  a foreground child that runs TEXT's directives (split
//	                  at ";") and ends; as its own session (subagents RFD)
//	                  to a client that declared clientCapabilities.subagents,
//	                  else folded into an "Agent: NAME" tool call
//	/subagent-bg NAME TEXT
//	                  the same child in the background: it outlives the turn
//	                  (session/cancel of the child, or of its parent, stops it)
//	/subagent-bad CASE
//	                  updates about children that make no sense (stranger,
//	                  twice, reuse: subagent_bad.go), for tests
//	/abort            ends the turn with stopReason "cancelled" by itself
//	/compact          the conversation becomes the words it was asked to
//	                  remember; "Compacted the conversation: ..."
//	/setup            "mode: M, model: M, options: effort=E" (recall adds the
//	                  same line when any of them is not the default)
//	/mode MODE        switches its own mode and says so (current_mode_update)
//	/title TEXT       names the session TEXT (session_info_update) and says so
//	/tools            lists the tools of the MCP servers it was given
//	/mcp TOOL ARGS    a tool call that calls TOOL (or SERVER/TOOL) of those
//	                  servers with ARGS (a JSON object, else {"text": ARGS})
//	anything else     "echo: <line>"
//
// Messages from successive lines are separated by a "\n" chunk. Every turn
// that answers ends with a usage_update: used = words in the conversation,
// size 100000, cost 0.001 USD per turn of the conversation so far.
//
// Guarantees:
//   - Each session lives in <Dir>/<id>.json (directory 0700, files 0600),
//     rewritten atomically. The user's prompt is saved before the turn
//     starts and everything the agent sent is saved when the turn ends, so a
//     crash mid-turn never loses the prompt.
//   - session/load replays the saved conversation as the very same
//     session/update notifications that were originally sent, before
//     answering (with LateReplay: answering at once, replaying
//     lateReplayPause later); session/resume restores the session without
//     replay.
//   - session/new sends an available_commands_update advertising compact
//     (none with NoCommands) before it answers.
//   - session/fork copies a session under a new id (unless NoFork, or
//     neither resume nor load is served: the fork could not be restored).
//   - It offers modes ask and code and three config options, the model
//     (category model: demo-small, demo-large), effort (thought_level: low,
//     high) and fast (a boolean), in its session/new, load and resume
//     answers (with LegacyModels: a models list and effort, legacy.go);
//     session/set_mode and session/set_config_option (and set_model) change
//     them and they are saved with the session, so load and resume bring
//     them back. The MCP servers of each
//     new, load or resume are kept in memory only (never in its files).
//   - session/close (advertised unless NoClose) cancels the session's
//     running turn, counts the close in the session's file ("closed") and
//     forgets it until a load or resume (close.go).
//   - session/delete (advertised unless NoDelete) removes the session's
//     file and notes its id in <Dir>/deleted-sessions.log; a session it
//     does not have is already gone: that succeeds too (close.go).
//   - A request the client cancels with $/cancel_request while it waits
//     (initialize during StartDelay) is noted in <Dir>/cancelled-requests.log.
//   - _session/steering (advertised in initialize's _meta unless NoSteer)
//     adds a message to the running turn, answered after the line the
//     turn is on (steer.go).
//   - Unknown sessions answer -32002 "Resource not found: session <id>".
//   - session/cancel stops a turn between lines and chunks and during
//     /sleep; the turn then answers stopReason "cancelled".
//   - Nothing but ACP is written to the output stream; diagnostics go to
//     stderr.
package demoagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Options configures the demo agent.
type Options struct {
	Dir          string        // directory holding the session files; created 0700 if missing
	NoResume     bool          // do not advertise or serve session/resume
	NoLoad       bool          // do not advertise or serve session/load
	FailOnResume bool          // answer session/resume and session/load with an unknown-session error
	NoFork       bool          // do not advertise or serve session/fork (never advertised without resume or load)
	NoCommands   bool          // advertise no commands (no compact)
	Delay        time.Duration // pause before every session/update notification
	StartDelay   time.Duration // pause before answering initialize (a slow-starting agent)
	// LegacyModels offers the model as agents did before ACP 1.x removed
	// it (legacy.go): a models list beside the config options, changed
	// with session/set_model, and effort with no category. Otherwise the
	// model, effort and fast are config options of categories model,
	// thought_level and a boolean, as published.
	LegacyModels bool
	// NoClose: do not advertise or serve session/close (which it otherwise
	// records in the session's file, "closed": n).
	NoClose bool
	// NoDelete: do not advertise or serve session/delete (which otherwise
	// removes the session's file and notes it in deleted-sessions.log).
	NoDelete bool
	// NoSteer: do not advertise or serve _session/steering (which
	// otherwise adds a message to the running turn, steer.go).
	NoSteer bool
	// LateReplay: session/load answers before its replay, which follows
	// lateReplayPause later, as Gemini CLI 0.61 streams the history it
	// loaded without waiting for it. A prompt waits for the replay's end.
	LateReplay bool
}

// lateReplayPause is how long after its answer to session/load a
// LateReplay agent starts replaying.
const lateReplayPause = 50 * time.Millisecond

// Run serves ACP on r/w until the client disconnects (r hits EOF) or ctx ends.
//
// It returns nil when the client disconnects and ctx's error when ctx ends.
// Run closes neither r nor w.
func Run(ctx context.Context, opts Options, r io.Reader, w io.Writer) error {
	if opts.Dir == "" {
		return errors.New("demoagent: Options.Dir is required")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return err
	}
	alive, stop := context.WithCancel(ctx)
	defer stop()

	a := &agent{
		opts:     opts,
		alive:    alive,
		ready:    make(chan struct{}),
		sessions: make(map[string]*session),
	}
	out := &lockedWriter{w: w}
	a.out = out
	pr, pw := io.Pipe()
	go a.filterLegacy(r, pw, out)
	// The SDK reads pr only once the connection is wired (a.ready): its
	// SetLogger is not synchronised with its reader.
	a.conn = acp.NewAgentSideConnection(a, out, readerAfter{a.ready, pr})
	// The SDK's diagnostics go to stderr, never to stdout (the protocol
	// stream); Info only says the client went away, as every session ends.
	a.conn.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	close(a.ready)

	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	stop()
	// Cancelled turns still save what they produced; give them a moment so
	// a process exiting right after Run does not lose it.
	a.drain(5 * time.Second)
	return ctx.Err()
}

// readerAfter reads r once open is closed.
type readerAfter struct {
	open <-chan struct{}
	r    io.Reader
}

func (g readerAfter) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// agent implements acp.Agent and acp.AgentLoader.
type agent struct {
	opts  Options
	alive context.Context // ends when Run stops serving
	ready chan struct{}   // closed once conn is set
	conn  *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*session
	fs       acp.FileSystemCapabilities // what the client said it supports
	terminal bool                       // the client serves terminal/*
	elicit   bool                       // the client answers form elicitations
	booleans atomic.Bool                // the client takes boolean config options (setup.go)
	closing  bool
	busy     sync.WaitGroup // running turns and replays

	out       *lockedWriter // the output, for updates the SDK does not type (subagent.go)
	subagents atomic.Bool   // the client declared clientCapabilities.subagents
	kids      children      // running subagents, for session/cancel
	folded    sync.Map      // child session id → *fold: children shown to the client as one tool call
}

var (
	_ acp.Agent       = (*agent)(nil)
	_ acp.AgentLoader = (*agent)(nil)
)

// client returns the connection, waiting for Run to finish wiring it.
func (a *agent) client() *acp.AgentSideConnection {
	<-a.ready
	return a.conn
}

// enter registers a turn or replay so that Run can wait for it; it fails
// once Run is shutting down.
func (a *agent) enter() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.busy.Add(1)
	return true
}

func (a *agent) drain(limit time.Duration) {
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		a.busy.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// scope derives a context that also ends when Run stops serving.
func (a *agent) scope(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(a.alive, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// send delivers one session/update, honouring Options.Delay.
func (a *agent) send(ctx context.Context, id string, u acp.SessionUpdate) error {
	if a.foldUpdate(id, u) { // subagent.go
		return ctx.Err()
	}
	if a.opts.Delay > 0 {
		if err := sleep(ctx, a.opts.Delay); err != nil {
			return err
		}
	}
	return a.client().SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(id), Update: u})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func errNoSession(id string) error {
	return &acp.RequestError{Code: -32002, Message: "Resource not found: session " + id}
}

func internalError(err error) error {
	return acp.NewInternalError(map[string]any{"error": err.Error()})
}

// Initialize implements acp.Agent.
func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	if a.opts.StartDelay > 0 {
		if err := sleep(ctx, a.opts.StartDelay); err != nil {
			a.noteCancelled("initialize")
			return acp.InitializeResponse{}, err
		}
	}
	a.mu.Lock()
	a.fs = p.ClientCapabilities.Fs
	a.terminal = p.ClientCapabilities.Terminal
	a.elicit = p.ClientCapabilities.Elicitation != nil && p.ClientCapabilities.Elicitation.Form != nil
	a.mu.Unlock()
	caps := acp.AgentCapabilities{LoadSession: !a.opts.NoLoad}
	if !a.opts.NoResume {
		caps.SessionCapabilities.Resume = &acp.SessionResumeCapabilities{}
	}
	if a.forks() {
		caps.SessionCapabilities.Fork = &acp.SessionForkCapabilities{}
	}
	if !a.opts.NoClose {
		caps.SessionCapabilities.Close = &acp.SessionCloseCapabilities{}
	}
	if !a.opts.NoDelete {
		caps.SessionCapabilities.Delete = &acp.SessionDeleteCapabilities{}
	}
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: caps,
		AgentInfo:         &acp.Implementation{Name: "kandev-demo-agent", Version: "0.1.0"},
		AuthMethods:       []acp.AuthMethod{},
		Meta:              a.steerMeta(),
	}, nil
}

// cancelledLog is the file, in Options.Dir, where the agent notes each
// request the client cancelled with $/cancel_request while it waited.
const cancelledLog = "cancelled-requests.log"

// noteCancelled appends method to cancelledLog when the client cancelled
// the request (the SDK ends its context on $/cancel_request), not when
// the agent itself is shutting down.
func (a *agent) noteCancelled(method string) {
	if a.alive.Err() != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(a.opts.Dir, cancelledLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(method + "\n")
}

// Authenticate implements acp.Agent; there is nothing to authenticate.
func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession implements acp.Agent.
func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	s := &session{file: sessionFile{ID: "demo-" + hex.EncodeToString(b[:]), Cwd: p.Cwd, Entries: []entry{}}}
	if err := save(a.opts.Dir, &s.file); err != nil {
		return acp.NewSessionResponse{}, internalError(err)
	}
	a.mu.Lock()
	a.sessions[s.file.ID] = s
	a.mu.Unlock()
	s.mcp = p.McpServers
	if err := a.advertise(ctx, s.file.ID); err != nil {
		return acp.NewSessionResponse{}, err
	}
	modes, opts := a.setupState(&s.file)
	return acp.NewSessionResponse{SessionId: acp.SessionId(s.file.ID), Modes: modes, ConfigOptions: opts}, nil
}
