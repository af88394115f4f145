// Package rpcwire stands between a JSON-RPC peer's stream (one message a
// line) and the ACP SDK's connection, which has two limits a session can
// meet: its line scanner ends the connection, silently, on a line over
// 10 MiB, and a connection whose 1,024-entry notification queue is full
// closes. A Pump offers every line to its caller before the connection
// sees it, so the caller takes what must not reach the connection (into a
// Queue, which has no bound) and refuses what it could not read; the rest
// is passed on in the order it came.
package rpcwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"sync"

	"github.com/tidwall/gjson"
)

// MaxLine is the longest line the SDK's connection reads (its buffer is
// 10 MiB, newline included).
const MaxLine = 10<<20 - 1

// keep is how much of the start and of the end of a line over a Pump's
// Limit is kept, to find its request id.
const keep = 64 << 10

// Pump passes a peer's lines to the SDK's connection.
type Pump struct {
	// Limit is the longest line kept: a longer one is read to its end, not
	// passed on, and handed to Long. 0 keeps lines of any length (for a
	// caller that takes the long ones before the connection sees them).
	Limit int
	// Take is offered every line read, trimmed of surrounding white space
	// (so maybe empty: an empty line is never passed on), before the
	// connection sees it. It returns true for a line it has taken, which is
	// not passed on, or an error that stops the pump. The line may be the
	// reader's buffer: copy what is kept after Take returns. Nil takes
	// nothing.
	Take func(line []byte) (bool, error)
	// Long receives what is kept of a line over Limit. Nil drops it.
	Long func(*Long)
}

// Run passes the lines of r to w (the connection's input) until r ends, a
// write fails or Take stops it, then closes w. It returns what ended it:
// nil at r's end, else the read, write or Take error.
func (p *Pump) Run(r io.Reader, w io.WriteCloser) error {
	defer w.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, long, err := readLine(br, p.Limit)
		switch {
		case long != nil:
			if p.Long != nil {
				p.Long(long)
			}
		case len(line) > 0 || err == nil: // a newline ends even an empty line
			line = bytes.TrimSpace(line)
			taken := false
			if p.Take != nil {
				var terr error
				if taken, terr = p.Take(line); terr != nil {
					return terr
				}
			}
			if !taken && len(line) > 0 {
				if _, werr := w.Write(append(line, '\n')); werr != nil {
					return werr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Long is what is kept of a line over a Pump's Limit: its start and its
// end (where a request id is written), and its length.
type Long struct {
	Head, Tail []byte
	Size       int // without the newline
}

func (l *Long) add(b []byte) {
	l.Size += len(b)
	if n := min(keep-len(l.Head), len(b)); n > 0 {
		l.Head = append(l.Head, b[:n]...)
	}
	l.Tail = append(l.Tail, b...)
	if len(l.Tail) > 2*keep {
		l.Tail = append(l.Tail[:0], l.Tail[len(l.Tail)-keep:]...)
	}
}

// readLine reads one line without its newline: br's buffer when the line
// fits in it, else a slice of its own. A line longer than limit (> 0) is
// read to its end but not kept (long).
func readLine(br *bufio.Reader, limit int) (line []byte, long *Long, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		if line == nil && long == nil && !errors.Is(rerr, bufio.ErrBufferFull) && (limit == 0 || len(chunk) <= limit+1) {
			return bytes.TrimRight(chunk, "\r\n"), nil, rerr // the usual line: no copy
		}
		switch {
		case long != nil:
			long.add(chunk)
		case limit > 0 && len(line)+len(chunk) > limit+1:
			long = &Long{}
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
			trimmed := bytes.TrimRight(long.Tail, "\r\n")
			long.Size -= len(long.Tail) - len(trimmed)
			long.Tail = trimmed
			return nil, long, rerr
		}
		return bytes.TrimRight(line, "\r\n"), nil, rerr
	}
}

// tailID finds a top-level id written last: `"id":7}` at the very end.
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|null)\s*}$`)
})

// ID finds the request id of a line too long to keep, compacted. Clients
// write it first (after "jsonrpc") or last; only a top-level id counts,
// never one inside the params.
func (l *Long) ID() (string, bool) {
	if id := gjson.GetBytes(l.Head, "id"); id.Exists() {
		return compactID(id.Raw)
	}
	if m := tailID().FindSubmatch(l.Tail); m != nil {
		return compactID(string(m[1]))
	}
	return "", false
}

// IsNotification reports whether line is a notification (no id) of method.
func IsNotification(line []byte, method string) bool {
	if !bytes.Contains(line, []byte(`"`+method+`"`)) {
		return false
	}
	r := gjson.GetManyBytes(line, "method", "id")
	return r[0].String() == method && !r[1].Exists()
}

// RequestID is the id of a request line (a method and an id), compacted as
// a connection writes it back in its answer.
func RequestID(line []byte) (string, bool) {
	if !gjson.ValidBytes(line) {
		return "", false // a connection answers nothing to it either
	}
	m := gjson.ParseBytes(line)
	id := m.Get("id")
	if !m.Get("method").Exists() || !id.Exists() {
		return "", false
	}
	return compactID(id.Raw)
}

// ResponseID is the id a message answers, compacted ("" and false for a
// notification or a request).
func ResponseID(msg []byte) (string, bool) {
	m := gjson.ParseBytes(msg)
	id := m.Get("id")
	if m.Get("method").Exists() || !id.Exists() {
		return "", false
	}
	return compactID(id.Raw)
}

func compactID(raw string) (string, bool) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return "", false
	}
	return b.String(), true
}

// Queue is an unbounded queue, first in first out: the peer's stream never
// waits for whoever drains it (the disk, a terminal).
type Queue[T any] struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []T
	closed bool
}

// Push adds v at the end; false when the queue is closed (v is dropped).
func (q *Queue[T]) Push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, v)
	q.wake()
	return true
}

// PopAll waits for items and takes them all, in order; false once the
// queue is closed and empty.
func (q *Queue[T]) PopAll() ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.waitLocked()
	}
	if len(q.items) == 0 {
		return nil, false
	}
	items := q.items
	q.items = nil
	return items, true
}

// Close ends the queue: Push refuses, PopAll returns what is left, then false.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wake()
}

func (q *Queue[T]) waitLocked() {
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	q.cond.Wait()
}

func (q *Queue[T]) wake() {
	if q.cond != nil {
		q.cond.Broadcast()
	}
}
