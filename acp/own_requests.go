package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// Requests kandev writes to the agent past the SDK, for methods the SDK
// does not have (session/set_model, legacy_models.go): written on the
// agent's stdin, serialized with the SDK's writes, with ids that cannot
// collide with the SDK's numeric ones, their answers taken off the agent's
// stdout before the SDK sees them (Conn.intercept).

// ownIDPrefix marks the ids of the requests kandev writes itself.
const ownIDPrefix = "kandev-"

// ownRequests are the requests written past the SDK, awaiting answers.
type ownRequests struct {
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan ownAnswer
}

type ownAnswer struct {
	result json.RawMessage
	err    *sdk.RequestError
}

// deliver hands an answer to its waiting request; it reports whether line
// was the answer to one of kandev's own requests.
func (o *ownRequests) deliver(line []byte) bool {
	id := gjson.GetBytes(line, "id")
	if id.Type != gjson.String || len(id.Str) < len(ownIDPrefix) || id.Str[:len(ownIDPrefix)] != ownIDPrefix {
		return false
	}
	o.mu.Lock()
	ch := o.waiting[id.Str]
	delete(o.waiting, id.Str)
	o.mu.Unlock()
	if ch != nil {
		var a ownAnswer
		if e := gjson.GetBytes(line, "error"); e.Exists() {
			a.err = &sdk.RequestError{}
			_ = json.Unmarshal([]byte(e.Raw), a.err)
		} else {
			a.result = json.RawMessage(gjson.GetBytes(line, "result").Raw)
		}
		ch <- a
	}
	return true
}

// call writes method with params to the agent and waits for its answer.
func (c *Conn) call(ctx context.Context, method string, params, result any) error {
	id := fmt.Sprintf("%s%d", ownIDPrefix, c.own.next.Add(1))
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	ch := make(chan ownAnswer, 1)
	c.own.mu.Lock()
	if c.own.waiting == nil {
		c.own.waiting = map[string]chan ownAnswer{}
	}
	c.own.waiting[id] = ch
	c.own.mu.Unlock()
	forget := func() {
		c.own.mu.Lock()
		delete(c.own.waiting, id)
		c.own.mu.Unlock()
	}
	if _, err := c.cancels.Write(append(msg, '\n')); err != nil {
		forget()
		return c.wrap(ctx, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return a.err
		}
		if result != nil && len(a.result) > 0 {
			return json.Unmarshal(a.result, result)
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.Done():
		forget()
		return c.wrap(ctx, fmt.Errorf("the agent closed the connection before it answered %s", method))
	}
}
