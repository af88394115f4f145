package container

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/acp"
)

// relayCommand is kandev's hidden command that runs inside the container.
const relayCommand = "__relay"

// The relay's own methods in the stream (acp's names; never sent to the
// agent): the client's acknowledgement, and the agent's answer to a request
// of an earlier client (the prompt of a turn whose kandev died).
const (
	MethodAck    = acp.RelayAckMethod
	MethodOrphan = acp.RelayOrphanMethod
)

// maxUnacked bounds the journal: past it the relay stops reading the
// agent's stdout (the agent waits) until a client acknowledges.
const maxUnacked = 64 << 20

// Hello is the first line the relay writes to a client that attaches.
type Hello struct {
	AgentPID int `json:"agent_pid"`
	// Initialized: the agent answered an initialize (a client talked to it).
	Initialized bool `json:"initialized"`
	// Prompt is the relay's id of the newest session/prompt an earlier
	// client sent whose answer no client has recorded (0: none): the turn
	// that client left running, or that ended while no client was there.
	// Its answer comes as MethodOrphan with this id.
	Prompt int64 `json:"prompt,omitempty"`
	// Resent counts the agent's unanswered requests sent again first,
	// before the journal from the acknowledged line.
	Resent int `json:"resent"`
	// Replayed counts the journal lines that follow, already written by
	// the agent and not acknowledged by a client.
	Replayed int `json:"replayed"`
}

// request is a client's request the agent has not answered yet.
type request struct {
	epoch  int
	orig   json.RawMessage
	method string
}

// relay keeps the agent's pipes and what it wrote that no client has
// acknowledged (its journal), and serves one client at a time.
type relay struct {
	mu   sync.Mutex
	cond *sync.Cond
	// lines[i] is line base+i of what the agent wrote; lines before acked
	// are dropped.
	lines   [][]byte
	base    int
	acked   int
	size    int // bytes in lines
	exited  bool
	stdin   io.WriteCloser
	inMu    sync.Mutex // orders writes to stdin
	errlog  io.Writer  // agent.err: what the relay refused (nil: nowhere)
	maxLine int        // the line bound (0: rpcwire.MaxLine; tests lower it)
	pid     int
	inited  bool
	epoch   int
	conn    net.Conn
	nextID  int64
	ids     map[int64]request // global id -> the client request it stands for
	pending map[string][]byte // the agent's unanswered requests, by raw id
	order   []string          // pending's ids in arrival order
}

// noteAgentLine keeps track of the agent's requests and answers; under mu.
func (r *relay) noteAgentLine(line []byte) {
	f := gjson.GetManyBytes(line, "id", "method")
	switch {
	case !f[0].Exists():
	case f[1].Exists(): // a request to the client
		r.pending[f[0].Raw] = line
		r.order = append(r.order, f[0].Raw)
	default: // an answer to a client's request
		if req, ok := r.ids[f[0].Int()]; ok && req.method == "initialize" {
			r.inited = true
		}
	}
}

func (r *relay) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go r.serveClient(c)
	}
}

// serveClient makes c the one client: an earlier one is dropped.
func (r *relay) serveClient(c net.Conn) {
	r.mu.Lock()
	if r.conn != nil {
		_ = r.conn.Close()
	}
	r.conn = c
	r.epoch++
	epoch := r.epoch
	hello, resent := r.helloFor(epoch)
	from := r.acked
	r.mu.Unlock()

	w := bufio.NewWriter(c)
	b, _ := json.Marshal(hello)
	_, _ = w.Write(append(b, '\n'))
	for _, l := range resent {
		_, _ = w.Write(l)
	}
	if w.Flush() != nil {
		_ = c.Close()
		return
	}
	go r.readClient(c, epoch, from, len(resent))
	r.feed(c, w, epoch, from)
}

// helloFor is what a client of epoch is told first, and the agent's
// unanswered requests it is sent again; under mu.
func (r *relay) helloFor(epoch int) (Hello, [][]byte) {
	hello := Hello{AgentPID: r.pid, Initialized: r.inited, Replayed: r.base + len(r.lines) - r.acked}
	for id, req := range r.ids {
		if req.epoch < epoch && req.method == "session/prompt" && id > hello.Prompt {
			hello.Prompt = id
		}
	}
	var resent [][]byte
	for _, id := range r.order {
		if line, ok := r.pending[id]; ok && r.indexOf(line) < r.acked {
			resent = append(resent, line)
		}
	}
	hello.Resent = len(resent)
	return hello, resent
}

// indexOf is the line number of a line held in lines (-1: gone); under mu.
func (r *relay) indexOf(line []byte) int {
	for i, l := range r.lines {
		if &l[0] == &line[0] {
			return r.base + i
		}
	}
	return -1
}

// feed writes the journal from line from on, then each line as the agent
// writes it, until the client goes or the agent's output ends.
func (r *relay) feed(c net.Conn, w *bufio.Writer, epoch, from int) {
	next := from
	for {
		r.mu.Lock()
		for next >= r.base+len(r.lines) && !r.exited && r.conn == c {
			r.cond.Wait()
		}
		if r.conn != c {
			r.mu.Unlock()
			return
		}
		if next < r.base {
			next = r.base
		}
		batch := make([][]byte, 0, r.base+len(r.lines)-next)
		for ; next < r.base+len(r.lines); next++ {
			batch = append(batch, r.toClient(r.lines[next-r.base], epoch))
		}
		ended := r.exited
		r.mu.Unlock()
		for _, l := range batch {
			if _, err := w.Write(l); err != nil {
				_ = c.Close()
				return
			}
		}
		if w.Flush() != nil {
			_ = c.Close()
			return
		}
		if ended && len(batch) == 0 {
			_ = c.Close()
			return
		}
	}
}

// toClient is an agent's line as the client of epoch sees it: an answer
// to one of its requests gets the request's own id back; an answer to an
// earlier client's request comes as MethodOrphan; under mu.
func (r *relay) toClient(line []byte, epoch int) []byte {
	f := gjson.GetManyBytes(line, "id", "method")
	if !f[0].Exists() || f[1].Exists() {
		return line
	}
	id := f[0].Int()
	req, ok := r.ids[id]
	if !ok {
		return line
	}
	if req.epoch != epoch {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": MethodOrphan,
			"params": map[string]any{"id": id, "method": req.method, "response": json.RawMessage(line)}})
		return append(b, '\n')
	}
	return withID(line, req.orig)
}

// withID is a JSON-RPC message with its id replaced.
func withID(line []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(b, '\n')
}

// readClient passes the client's lines to the agent: its requests under a
// relay-wide id (so a later client's ids never collide with them), its
// answers as they are, its acknowledgements to the journal.
func (r *relay) readClient(c net.Conn, epoch, from, resent int) {
	br := bufio.NewReaderSize(c, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			r.fromClient(line, epoch, from, resent)
		}
		if err != nil {
			r.mu.Lock()
			if r.conn == c {
				r.conn = nil
				r.cond.Broadcast()
			}
			r.mu.Unlock()
			_ = c.Close()
			return
		}
	}
}

func (r *relay) fromClient(line []byte, epoch, from, resent int) {
	f := gjson.GetManyBytes(line, "id", "method", "params.lines")
	r.mu.Lock()
	if f[1].String() == MethodAck {
		if n := from + int(f[2].Int()) - resent; n > r.acked && n <= r.base+len(r.lines) && f[2].Int() >= int64(resent) {
			r.acked = n
			r.trim()
		}
		r.mu.Unlock()
		return
	}
	switch {
	case f[0].Exists() && f[1].Exists(): // a request: a relay-wide id
		id := r.nextID
		r.nextID++
		r.ids[id] = request{epoch: epoch, orig: json.RawMessage(f[0].Raw), method: f[1].String()}
		line = withID(line, json.RawMessage(fmt.Sprint(id)))
	case f[0].Exists(): // an answer to the agent's request
		delete(r.pending, f[0].Raw)
	}
	r.mu.Unlock()
	r.toAgent(line)
}

// trim drops acknowledged lines, keeping the agent's unanswered requests
// (held in pending) and forgetting answered client requests; under mu.
func (r *relay) trim() {
	n := r.acked - r.base
	if n <= 0 {
		return
	}
	for _, l := range r.lines[:n] {
		r.size -= len(l)
		f := gjson.GetManyBytes(l, "id", "method")
		if f[0].Exists() && !f[1].Exists() {
			delete(r.ids, f[0].Int())
		}
	}
	r.lines = append([][]byte(nil), r.lines[n:]...)
	r.base = r.acked
	kept := r.order[:0]
	for _, id := range r.order {
		if _, ok := r.pending[id]; ok {
			kept = append(kept, id)
		}
	}
	r.order = kept
	r.cond.Broadcast()
}
