package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/rpcwire"
	"github.com/kandev/kandev/setup"
)

// ErrProtocol says the agent broke the protocol (non-JSON on stdout, ...).
var ErrProtocol = errors.New("agent protocol error")

// ConnOptions are the owner's hooks into a connection.
type ConnOptions struct {
	Cwd string
	// OnEvents receives converted session/update events in order, in batches,
	// on the connection's recorder goroutine (never on the SDK's), so the
	// time it takes never backs up the SDK's bounded notification queue.
	OnEvents func([]*eventlog.Event)
	// Permission answers session/request_permission.
	Permission func(ctx context.Context, req sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	// MCPServers are passed with every session/new, load and resume
	// (expanded: they may hold secrets; nil passes none).
	MCPServers []sdk.McpServer
	// AllowTerminal says whether the agent may run a command in a client
	// terminal now (nil error); nil refuses every terminal (terminal.go).
	AllowTerminal func() error
	// Elicit answers an agent's question to the person (elicitation/create,
	// form mode); nil declines every question (ext_elicitation.go).
	Elicit func(ctx context.Context, q ElicitationQuestion) ElicitationAnswer
	// KnownChildren are the children the log already has (id → ended), so
	// that their later updates are routed to them (subagent_updates.go).
	KnownChildren map[string]bool
}

// Conn is a live ACP connection to one agent process.
//
// session/update notifications are taken off the agent's stdout before they
// reach the SDK and queued without bound, so a turn or a session/load replay
// of any length cannot overflow the SDK's 1,024-entry notification queue
// (which closes the connection). Everything else goes through the SDK.
type Conn struct {
	Proc Transport
	sdk  *sdk.ClientSideConnection
	opts ConnOptions

	q        rpcwire.Queue[queued]
	fatalMu  sync.Mutex
	fatal    error
	activity atomic.Int64 // unix nanos of the last line from the agent
	replayed atomic.Int64 // updates dropped while replaying a load
	// replayedUser are the user messages of session/load replays (chunks of
	// one message joined), for RequestHeld; recorder goroutine, under replayMu.
	replayMu     sync.Mutex
	replayedUser []string
	lastReplayed bool // the previous replayed update was a user chunk
	recDone      chan struct{}
	offeredMu    sync.Mutex
	offered      setup.Offered // the setup the agent answered its last session/new, load or resume with
	answer       AgentSetup    // the same answer as the agent gave it (for an editor), kept current
	legacy       *setup.Models // the model list of the answer just read (legacy_models.go)
	legacyNames  map[string]string
	cancels      *cancelWriter // the agent's stdin, counting $/cancel_request (cancel_request.go)
	terms        terminals     // the agent's client terminals (terminal.go)
	own          ownRequests   // requests kandev writes past the SDK (ext_session_delete.go)
	offersDelete atomic.Bool   // the agent advertised sessionCapabilities.delete
	offersSteer  atomic.Bool   // the agent advertised _meta.steering.supported (ext_steering.go)
	// lines counts the stream's lines handled (queued or given to the SDK),
	// for an Acker; an update is counted and queued under countMu, so an
	// acknowledgement never runs ahead of the queue (reattach.go). orphans
	// are RelayOrphanMethod answers.
	lines   atomic.Int64
	countMu sync.Mutex
	orphans chan orphan
	parent  atomic.Pointer[string] // the agent's session id for kandev's session (subagent_updates.go)
}

// Connect wires an ACP client connection to a launched agent process.
func Connect(p Transport, opts ConnOptions) *Conn {
	c := &Conn{Proc: p, opts: opts, recDone: make(chan struct{}), orphans: make(chan orphan, 16)}
	c.activity.Store(time.Now().UnixNano())
	pr, pw := io.Pipe()
	stdin, stdout := p.Streams()
	c.cancels = newCancelWriter(stdin)
	c.sdk = sdk.NewClientSideConnection(&client{c: c}, c.cancels, pr)
	// kandev reports what matters itself (garbage on stdout, a dead agent):
	// the SDK's diagnostics go nowhere. Set before intercept feeds the SDK
	// its first line, as SetLogger is not synchronised with its reader.
	c.sdk.SetLogger(slog.New(slog.DiscardHandler))
	go c.intercept(stdout, pw)
	go c.record()
	if a, ok := p.(Acker); ok {
		go c.ackLoop(a)
	}
	go func() {
		<-c.sdk.Done()
		c.KillTerminals()
	}()
	return c
}

// intercept reads the agent's stdout line by line: session/update
// notifications go to kandev's own queue (updates of any length, any
// number of them), the answers to kandev's own requests to their callers,
// everything else to the SDK.
func (c *Conn) intercept(r io.Reader, sdkIn *io.PipeWriter) {
	defer c.q.Close()
	pump := rpcwire.Pump{Limit: rpcwire.MaxLine, Long: func(l *rpcwire.Long) { c.refuseLong(l, sdkIn) }, Take: func(line []byte) (bool, error) {
		c.activity.Store(time.Now().UnixNano())
		switch {
		case len(line) == 0:
			c.lines.Add(1) // one line of the stream handled
			return true, nil
		case line[0] != '{' || !gjson.ValidBytes(line):
			c.setFatal(fmt.Errorf("%w: the agent printed non-JSON on stdout: %q", ErrProtocol, history.Clip(string(line), 120)))
			c.Proc.Kill()
			return true, ErrProtocol
		case rpcwire.IsNotification(line, sdk.ClientMethodSessionUpdate):
			params := []byte(gjson.GetBytes(line, "params").Raw)
			c.countMu.Lock()
			c.q.Push(queued{params: params, line: c.lines.Add(1)})
			c.countMu.Unlock()
			return true, nil
		case isOrphan(line):
			c.countMu.Lock()
			c.lines.Add(1)
			c.queueOrphan(line)
			c.countMu.Unlock()
			return true, nil
		}
		// Counted before the SDK has it: a caller the answer wakes
		// acknowledges it with everything before it (ackNow).
		c.lines.Add(1)
		if c.own.deliver(line) {
			return true, nil
		}
		if bytes.Contains(line, []byte(`"agentCapabilities"`)) {
			c.noteInitialize(line)
		}
		if hasLegacyModels(line) {
			c.noteLegacyModels(line)
		}
		return false, nil
	}}
	_ = pump.Run(r, sdkIn)
}

// record drains the update queue in order on its own goroutine.
func (c *Conn) record() {
	defer close(c.recDone)
	tools := toolNames{}
	kids := newChildStreams(&c.parent, c.opts.KnownChildren)
	replaying := replayOff
	var batch []*eventlog.Event
	acker, _ := c.Proc.(Acker)
	var recorded, acked int64 // stream lines recorded, and acknowledged
	flush := func() {
		if len(batch) > 0 && c.opts.OnEvents != nil {
			c.opts.OnEvents(batch)
		}
		batch = nil
		// What OnEvents has recorded is acknowledged at once: a kandev killed
		// now is shown none of it again when the next one attaches.
		if acker != nil && recorded > acked {
			acker.Ack(recorded)
			acked = recorded
		}
	}
	for {
		items, ok := c.q.PopAll()
		if !ok {
			flush()
			return
		}
		for _, it := range items {
			switch {
			case it.replay != nil:
				flush()
				replaying = *it.replay
			case it.fn != nil:
				flush()
				it.fn()
			case it.event != nil:
				batch = append(batch, it.event)
			case replaying == replayAll || replaying == replayLate && isConversation(it.params):
				recorded = max(recorded, it.line) // dropped on purpose: handled
				c.replayed.Add(1)
				c.noteReplayed(it.params)
			default:
				recorded = max(recorded, it.line)
				batch = append(batch, kids.events(it.params, tools)...)
				if len(batch) >= 4096 {
					flush()
				}
			}
		}
		flush()
	}
}

// Barrier runs fn on the recorder goroutine after every update received so
// far has been handed to OnEvents, and waits for it.
func (c *Conn) Barrier(fn func()) {
	done := make(chan struct{})
	if !c.q.Push(queued{fn: func() {
		if fn != nil {
			fn()
		}
		close(done)
	}}) {
		// The agent's stdout has closed: the recorder still drains what was
		// queued before; run fn after it, so order is kept even on a crash.
		<-c.recDone
		if fn != nil {
			fn()
		}
		return
	}
	select {
	case <-done:
	case <-c.recDone:
	}
}

// replayMode says which updates the recorder drops as a session/load's
// replay of the conversation.
type replayMode int

const (
	replayOff  replayMode = iota
	replayAll             // until the agent answers session/load: every update
	replayLate            // after the answer, until the agent falls silent: the conversation's updates
)

func (c *Conn) setReplaying(m replayMode) {
	c.q.Push(queued{replay: &m})
}

// isConversation says whether an update re-tells the conversation (a
// message, a thought, a tool call, a plan, a child's announcement, prompt
// or end), as a load's replay does; the rest (commands, modes, options,
// usage, the title) is the agent's state now, recorded even right after a
// load.
func isConversation(params []byte) bool {
	switch gjson.GetBytes(params, "update.sessionUpdate").String() {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
		"subagent_update", "session_message", "subagent_spawned", "subagent_state_update",
		"async_task_spawned", "async_task_progress", "async_task_state_update":
		return true
	}
	return false
}

// Late replay: an agent may send its session/load replay after its answer
// to the load (Gemini CLI 0.61 streams the history without waiting for it),
// so the replay's end is not the answer: it is the agent's silence.
const (
	// loadQuiet is how long the agent is silent after its answer before
	// its replay counts as over.
	loadQuiet = 200 * time.Millisecond
	// loadQuietMax bounds the wait for an agent that never falls silent.
	loadQuietMax = 10 * time.Second
)

// awaitQuiet returns once the agent has sent nothing for quiet, at most
// limit after it was called, or when ctx ends or the agent's stdout closes.
func (c *Conn) awaitQuiet(ctx context.Context, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		wait := min(quiet-c.IdleFor(), time.Until(deadline))
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.Done():
			t.Stop()
			return
		}
	}
}

func (c *Conn) setFatal(err error) {
	c.fatalMu.Lock()
	if c.fatal == nil {
		c.fatal = err
	}
	c.fatalMu.Unlock()
}

// Fatal is the protocol error that ended the connection, if any.
func (c *Conn) Fatal() error {
	c.fatalMu.Lock()
	defer c.fatalMu.Unlock()
	return c.fatal
}

// Done is closed when the agent's stdout has closed.
func (c *Conn) Done() <-chan struct{} { return c.sdk.Done() }

// IdleFor is how long the agent has been silent.
func (c *Conn) IdleFor() time.Duration {
	return time.Since(time.Unix(0, c.activity.Load()))
}

// noteReplayed keeps the text of a replayed user message chunk.
func (c *Conn) noteReplayed(params []byte) {
	u := gjson.GetManyBytes(params, "update.sessionUpdate", "update.content.text")
	user := u[0].String() == "user_message_chunk"
	c.replayMu.Lock()
	defer c.replayMu.Unlock()
	switch {
	case user && c.lastReplayed:
		c.replayedUser[len(c.replayedUser)-1] += u[1].String()
	case user:
		c.replayedUser = append(c.replayedUser, u[1].String())
	}
	c.lastReplayed = user
}

// ReplayedUserMessages are the user messages the agent replayed in its
// session/load (none after any other restore).
func (c *Conn) ReplayedUserMessages() []string {
	c.replayMu.Lock()
	defer c.replayMu.Unlock()
	return append([]string(nil), c.replayedUser...)
}

// Replayed counts the updates of session/load replays that were not recorded.
func (c *Conn) Replayed() int64 { return c.replayed.Load() }

// queued is one item of the update queue: an update's params, an event
// kandev made itself, a barrier function, or a replay switch.
type queued struct {
	params []byte
	line   int64 // the stream's line number of an update (for an Acker)
	event  *eventlog.Event
	fn     func()
	replay *replayMode
}
