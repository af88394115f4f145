package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tidwall/gjson"
)

// orphan is the agent's answer to a request an earlier kandev sent before
// it died (RelayOrphanMethod): the JSON-RPC response as the agent wrote it.
type orphan struct {
	id, method string
	response   []byte
}

func isOrphan(line []byte) bool {
	return bytes.Contains(line, []byte(RelayOrphanMethod)) && gjson.GetBytes(line, "method").String() == RelayOrphanMethod
}

// queueOrphan hands an orphaned answer over after every update the agent
// wrote before it has been recorded.
func (c *Conn) queueOrphan(line []byte) {
	p := gjson.GetManyBytes(line, "params.method", "params.response", "params.id")
	o := orphan{id: p[2].Raw, method: p[0].String(), response: []byte(p[1].Raw)}
	c.q.Push(queued{fn: func() {
		select {
		case c.orphans <- o:
		default: // nobody waits for that many: dropped
		}
	}})
}

// AwaitPrompt waits for the end of a turn an earlier kandev prompted and
// this one reattached to: the stop reason the agent answered that prompt
// (the relay's id, Reattachable) with; answers to earlier prompts, already
// recorded, are passed over. Every update the agent sent before has been handed to OnEvents
// when it returns. ctx ending gives up waiting (the turn goes on).
func (c *Conn) AwaitPrompt(ctx context.Context, id string) (string, error) {
	for {
		select {
		case o := <-c.orphans:
			if o.method != "session/prompt" || o.id != id {
				continue
			}
			var resp struct {
				Result *struct {
					StopReason string `json:"stopReason"`
				} `json:"result"`
				Error *sdk.RequestError `json:"error"`
			}
			if err := json.Unmarshal(o.response, &resp); err != nil {
				return "", c.wrap(ctx, err)
			}
			if resp.Error != nil {
				return "", c.wrap(ctx, resp.Error)
			}
			if resp.Result == nil {
				return "", nil
			}
			return resp.Result.StopReason, nil
		case <-c.Done():
			c.Barrier(nil)
			return "", c.wrap(ctx, errors.New("the agent's output ended"))
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// ackLoop tells an Acker, a few times a second, how many lines of the
// stream have been recorded: sampled before a barrier, acknowledged after
// it, so a line is acknowledged only once OnEvents has had it.
func (c *Conn) ackLoop(a Acker) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.Done():
			return
		case <-tick.C:
			c.ackNow()
		}
	}
}

// ackNow acknowledges what has been recorded so far (an Acker only).
func (c *Conn) ackNow() {
	a, ok := c.Proc.(Acker)
	if !ok {
		return
	}
	c.countMu.Lock()
	n := c.lines.Load()
	done := make(chan struct{})
	pushed := c.q.Push(queued{fn: func() { a.Ack(n); close(done) }})
	c.countMu.Unlock()
	if !pushed {
		return // the stream has ended: nothing more is acknowledged
	}
	select {
	case <-done:
	case <-c.recDone:
	}
}
