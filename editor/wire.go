package editor

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/internal/rpcwire"
)

// maxLine is the longest JSON-RPC line passed to the SDK's connection.
const maxLine = rpcwire.MaxLine

// wire stands between the editor's stdio and the SDK's connection. It
// guarantees that every request read before the editor closed stdin is
// answered before Serve returns (pending counts requests as they are read,
// before the connection sees them, and responses as they are written), and
// that a line too long for the connection is answered with an error
// instead of ending the connection: the requests after it are served.
type wire struct {
	in  *io.PipeReader // what the connection reads
	inW *io.PipeWriter // where pump writes it
	out io.Writer      // the editor's end: where answers go
	log func(format string, args ...any)
	// caps reads what the editor declared off its initialize request.
	caps *editorCaps

	writeMu sync.Mutex // one message per Write, from the connection or from here

	mu      sync.Mutex
	cond    *sync.Cond
	pending map[string]int // request id → requests read with it and not answered
	eof     bool
}

func newWire(w io.Writer, log func(string, ...any)) *wire {
	pr, pw := io.Pipe()
	wi := &wire{in: pr, inW: pw, out: w, log: log, pending: map[string]int{}}
	wi.cond = sync.NewCond(&wi.mu)
	return wi
}

// start begins passing the editor's lines from r to the connection.
func (wi *wire) start(r io.Reader) { go wi.pump(r, wi.inW) }

// Write passes one message of the connection to the editor and notes the
// request it answers.
func (wi *wire) Write(p []byte) (int, error) {
	wi.writeMu.Lock()
	n, err := wi.out.Write(p)
	wi.writeMu.Unlock()
	if id, ok := rpcwire.ResponseID(p); ok {
		wi.answered(id)
	}
	return n, err
}

// pump copies the editor's lines to the connection, refusing those too
// long for it, and closes the connection's input at the editor's EOF.
func (wi *wire) pump(r io.Reader, pw *io.PipeWriter) {
	p := rpcwire.Pump{
		Limit: maxLine,
		Take: func(line []byte) (bool, error) {
			if id, ok := rpcwire.RequestID(line); ok {
				wi.mu.Lock()
				wi.pending[id]++
				wi.mu.Unlock()
				if wi.caps != nil {
					wi.caps.noteInitialize(line)
				}
			}
			return false, nil
		},
		Long: wi.refuse,
	}
	if err := p.Run(r, pw); err != nil {
		wi.log("reading from the editor: %v", err)
	}
	wi.mu.Lock()
	wi.eof = true
	wi.cond.Broadcast()
	wi.mu.Unlock()
}

// refuse answers a line too long to pass on with an invalid-request error
// when its id can be found, and says so on stderr in any case.
func (wi *wire) refuse(l *rpcwire.Long) {
	msg := fmt.Sprintf("message of %d bytes refused: kandev acp reads JSON-RPC lines of up to %d bytes (10 MiB); send large content as a resource link", l.Size, maxLine)
	id, ok := l.ID()
	if !ok {
		wi.log("%s (no request id found in it, so no answer was sent)", msg)
		return
	}
	wi.log("%s (request id %s answered with an error)", msg, id)
	b, err := json.Marshal(struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Error   *sdk.RequestError `json:"error"`
	}{"2.0", json.RawMessage(id), &sdk.RequestError{Code: -32600, Message: "Invalid Request: " + msg}})
	if err != nil {
		return
	}
	wi.writeMu.Lock()
	defer wi.writeMu.Unlock()
	_, _ = wi.out.Write(append(b, '\n'))
}

func (wi *wire) answered(id string) {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	if wi.pending[id] > 1 {
		wi.pending[id]--
	} else {
		delete(wi.pending, id)
	}
	wi.cond.Broadcast()
}

// drain waits until every request read from the editor has been answered
// (and, with eof, the editor's input has ended), or until the bound passes
// (0: none). It reports whether all were answered.
func (wi *wire) drain(eof bool, bound time.Duration) bool {
	var deadline time.Time
	if bound > 0 {
		deadline = time.Now().Add(bound)
		t := time.AfterFunc(bound, func() {
			wi.mu.Lock()
			wi.cond.Broadcast()
			wi.mu.Unlock()
		})
		defer t.Stop()
	}
	wi.mu.Lock()
	defer wi.mu.Unlock()
	for eof && !wi.eof || len(wi.pending) > 0 {
		if bound > 0 && !time.Now().Before(deadline) {
			return false
		}
		wi.cond.Wait()
	}
	return true
}
