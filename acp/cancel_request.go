package acp

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"
)

// $/cancel_request is ACP's cancellation of one request (protocol 1.x; the
// acp-go-sdk v0.13.5 sends it by itself, with the request's id, when the
// context of a request kandev sent ends). kandev's start-up and setup
// requests end that way when an agent hangs past [agent]
// handshake_timeout_seconds, and the agent is stopped next: the owner first
// waits (AwaitCancelRequests) until each owed notification is written, so
// the agent learns which request was given up before its stdin closes, and
// can stop the stuck work itself.

// cancelMethod is the notification's method as it appears on the wire.
var cancelMethod = []byte(`"method":"$/cancel_request"`)

// cancelWriter is the agent's stdin as the SDK writes to it (one Write per
// message), counting the $/cancel_request notifications written.
type cancelWriter struct {
	w    io.Writer
	wmu  sync.Mutex // one message at a time: the SDK's and kandev's own (ext_session_delete.go)
	mu   sync.Mutex
	cond *sync.Cond
	sent int // notifications written
	owed int // requests whose context ended before their answer
}

func newCancelWriter(w io.Writer) *cancelWriter {
	cw := &cancelWriter{w: w}
	cw.cond = sync.NewCond(&cw.mu)
	return cw
}

func (cw *cancelWriter) Write(p []byte) (int, error) {
	cw.wmu.Lock()
	n, err := cw.w.Write(withSessionCapabilities(p)) // client_caps.go
	if err == nil {
		n = len(p)
	}
	cw.wmu.Unlock()
	if err == nil && bytes.Contains(p, cancelMethod) {
		cw.mu.Lock()
		cw.sent++
		cw.cond.Broadcast()
		cw.mu.Unlock()
	}
	return n, err
}

// owe notes a request given up (its context ended): the SDK queues its
// $/cancel_request.
func (cw *cancelWriter) owe() {
	cw.mu.Lock()
	cw.owed++
	cw.mu.Unlock()
}

// await waits up to d until every owed notification is written; it
// reports whether they were.
func (cw *cancelWriter) await(d time.Duration) bool {
	t := time.AfterFunc(d, func() {
		cw.mu.Lock()
		cw.cond.Broadcast()
		cw.mu.Unlock()
	})
	defer t.Stop()
	deadline := time.Now().Add(d)
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for cw.sent < cw.owed && time.Now().Before(deadline) {
		cw.cond.Wait()
	}
	return cw.sent >= cw.owed
}

// gaveUp notes a request whose context ended before it was answered.
func (c *Conn) gaveUp(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		c.cancels.owe()
	}
}

// AwaitCancelRequests waits up to d until the $/cancel_request of every
// request kandev gave up on is written to the agent (none is sent to an
// agent whose connection is gone); call it before stopping the agent.
func (c *Conn) AwaitCancelRequests(d time.Duration) bool {
	select {
	case <-c.Done():
		return true
	default:
	}
	return c.cancels.await(d)
}
