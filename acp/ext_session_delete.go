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

// session/delete: the client asks the agent to forget one of its sessions
// (ACP protocol version 1, stable schema as published with the TypeScript
// SDK @agentclientprotocol/sdk 1.9: DeleteSessionRequest {sessionId},
// DeleteSessionResponse {}, advertised as
// agentCapabilities.sessionCapabilities.delete). acp-go-sdk v0.13.0 has
// neither the method nor the capability, and its extension hooks only
// carry "_"-prefixed methods; so kandev writes the request itself on the
// agent's stdin (serialized with the SDK's writes, ids that cannot collide
// with the SDK's numeric ones) and takes the answer off the agent's stdout
// before the SDK sees it, and reads the capability off the raw initialize
// answer. kandev prune sends it (see docs/commands.md).

// MethodSessionDelete is the method's name on the wire.
const MethodSessionDelete = "session/delete"

// DeleteSessionRequest is session/delete's params.
type DeleteSessionRequest struct {
	SessionID string `json:"sessionId"`
}

// DeleteSessionResponse is session/delete's result (nothing kandev reads).
type DeleteSessionResponse struct {
	Meta map[string]any `json:"_meta,omitempty"`
}

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

// DeleteSession asks the agent to delete session token (session/delete);
// the caller checks OffersDelete.
func (c *Conn) DeleteSession(ctx context.Context, token string) error {
	return c.call(ctx, MethodSessionDelete, DeleteSessionRequest{SessionID: token}, &DeleteSessionResponse{})
}

// OffersDelete reports whether the agent advertised
// sessionCapabilities.delete in its initialize answer.
func (c *Conn) OffersDelete() bool { return c.offersDelete.Load() }

// noteInitialize reads the capabilities the SDK's types drop off an
// initialize answer.
func (c *Conn) noteInitialize(line []byte) {
	caps := gjson.GetBytes(line, "result.agentCapabilities")
	if !caps.Exists() {
		return
	}
	c.offersSteer.Store(steeringIn(gjson.GetBytes(line, "result._meta")))
	if d := caps.Get("sessionCapabilities.delete"); d.Exists() && d.Type != gjson.Null {
		c.offersDelete.Store(true)
	}
}

// WithDeleteAdvertised adds sessionCapabilities.delete to a recorded
// initialize answer (JSON of sdk.InitializeResponse), for DeleteAdvertised.
func WithDeleteAdvertised(caps json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(caps, &m) != nil {
		return caps
	}
	ac, _ := m["agentCapabilities"].(map[string]any)
	if ac == nil {
		ac = map[string]any{}
		m["agentCapabilities"] = ac
	}
	sc, _ := ac["sessionCapabilities"].(map[string]any)
	if sc == nil {
		sc = map[string]any{}
		ac["sessionCapabilities"] = sc
	}
	sc["delete"] = map[string]any{}
	b, err := json.Marshal(m)
	if err != nil {
		return caps
	}
	return b
}

// DeleteAdvertised reports whether a recorded initialize answer
// advertises session/delete.
func DeleteAdvertised(caps json.RawMessage) bool {
	d := gjson.GetBytes(caps, "agentCapabilities.sessionCapabilities.delete")
	return d.Exists() && d.Type != gjson.Null
}
