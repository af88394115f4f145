package editor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// maxLine is the longest JSON-RPC line passed to the SDK's connection,
// whose line scanner stops the whole connection (silently) on a longer one:
// its buffer is 10 MiB, newline included.
const maxLine = 10<<20 - 1

// keep is how much of the start and of the end of a refused line is kept
// to find its request id.
const keep = 64 << 10

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
	if id, ok := responseID(p); ok {
		wi.answered(id)
	}
	return n, err
}

// pump copies the editor's lines to the connection, refusing those it
// could not read, and closes the connection's input at the editor's EOF.
func (wi *wire) pump(r io.Reader, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(r, keep)
	for {
		line, long, err := readLine(br)
		switch {
		case long != nil:
			wi.refuse(long)
		case len(bytes.TrimSpace(line)) > 0:
			if id, ok := requestID(line); ok {
				wi.mu.Lock()
				wi.pending[id]++
				wi.mu.Unlock()
			}
			if _, werr := pw.Write(append(line, '\n')); werr != nil {
				err = werr
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				wi.log("reading from the editor: %v", err)
			}
			wi.mu.Lock()
			wi.eof = true
			wi.cond.Broadcast()
			wi.mu.Unlock()
			pw.Close()
			return
		}
	}
}

// longLine is what is kept of a line too long to pass on: its start and
// its end (where a request id is written), and its length.
type longLine struct {
	head, tail []byte
	size       int
}

func (l *longLine) add(b []byte) {
	l.size += len(b)
	if n := min(keep-len(l.head), len(b)); n > 0 {
		l.head = append(l.head, b[:n]...)
	}
	l.tail = append(l.tail, b...)
	if len(l.tail) > 2*keep {
		l.tail = append(l.tail[:0], l.tail[len(l.tail)-keep:]...)
	}
}

// readLine reads one line without its newline. A line longer than maxLine
// is read to its end but not kept (long).
func readLine(br *bufio.Reader) (line []byte, long *longLine, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		switch {
		case long != nil:
			long.add(chunk)
		case len(line)+len(chunk) > maxLine+1:
			long = &longLine{}
			long.add(line)
			long.add(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if long != nil {
			trimmed := bytes.TrimRight(long.tail, "\r\n")
			long.size -= len(long.tail) - len(trimmed)
			long.tail = trimmed
			return nil, long, rerr
		}
		return bytes.TrimRight(line, "\r\n"), nil, rerr
	}
}

// refuse answers a line too long to pass on with an invalid-request error
// when its id can be found, and says so on stderr in any case.
func (wi *wire) refuse(l *longLine) {
	msg := fmt.Sprintf("message of %d bytes refused: kandev acp reads JSON-RPC lines of up to %d bytes (10 MiB); send large content as a resource link", l.size, maxLine)
	id, ok := l.id()
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

// requestID is the id of a request line (a method and an id), compacted as
// the connection writes it back in its answer.
func requestID(line []byte) (string, bool) {
	if !gjson.ValidBytes(line) {
		return "", false // the connection answers nothing to it either
	}
	m := gjson.ParseBytes(line)
	id := m.Get("id")
	if !m.Get("method").Exists() || !id.Exists() {
		return "", false
	}
	return compactID(id.Raw)
}

// responseID is the id a written message answers ("" for a notification
// or a request of kandev's to the editor).
func responseID(msg []byte) (string, bool) {
	m := gjson.ParseBytes(msg)
	id := m.Get("id")
	if m.Get("method").Exists() || !id.Exists() {
		return "", false
	}
	return compactID(id.Raw)
}

// tailID finds a top-level id written last: `"id":7}` at the very end.
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|null)\s*}$`)
})

// id finds the request id of a line too long to keep. Clients write it
// first (after "jsonrpc") or last; gjson matches top-level keys only, so
// an id inside the params is never taken for it.
func (l *longLine) id() (string, bool) {
	if id := gjson.GetBytes(l.head, "id"); id.Exists() {
		return compactID(id.Raw)
	}
	if m := tailID().FindSubmatch(l.tail); m != nil {
		return compactID(string(m[1]))
	}
	return "", false
}

func compactID(raw string) (string, bool) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return "", false
	}
	return b.String(), true
}
