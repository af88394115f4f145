package acp

import (
	"io"
	"time"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/rpcwire"
)

// refuseLong handles a line of the agent's over rpcwire.MaxLine, which
// the pump read through without keeping: a request of the agent's is
// answered with an error (the agent waits for it), an answer to one of
// kandev's requests is replaced by an error answer (its caller waits for
// it), and a notification is dropped; each leaves a message_refused marker
// in the log. It runs on the pump's goroutine, the only writer of sdkIn.
func (c *Conn) refuseLong(l *rpcwire.Long, sdkIn io.Writer) {
	c.activity.Store(time.Now().UnixNano())
	msg := rpcwire.Refusal(l.Size, rpcwire.MaxLine)
	m := history.NewMarker(history.MarkerMessageRefused, "The agent wrote "+msg+"; it was dropped.", "")
	c.countMu.Lock()
	c.q.Push(queued{event: &m})
	c.lines.Add(1) // one line of the stream handled
	c.countMu.Unlock()
	id, ok := l.ID()
	switch {
	case !ok:
	case l.IsRequest():
		_, _ = c.cancels.Write(rpcwire.ErrorAnswer(id, -32600, "Invalid Request: "+msg))
	default:
		answer := rpcwire.ErrorAnswer(id, -32603, "Internal error: the agent's answer was refused: "+msg)
		if !c.own.deliver(answer) {
			_, _ = sdkIn.Write(answer)
		}
	}
}
