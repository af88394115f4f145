package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// session/delete: the client asks the agent to forget one of its sessions
// (advertised as agentCapabilities.sessionCapabilities.delete). kandev
// prune sends it (see docs/commands.md).

// DeleteSession asks the agent to delete session token (session/delete);
// the caller checks OffersDelete.
func (c *Conn) DeleteSession(ctx context.Context, token string) error {
	_, err := c.sdk.UnstableDeleteSession(ctx, sdk.UnstableDeleteSessionRequest{SessionId: sdk.SessionId(token)})
	return c.wrap(ctx, err)
}

// OffersDelete reports whether the agent advertised
// sessionCapabilities.delete in its initialize answer.
func (c *Conn) OffersDelete() bool { return c.offersDelete.Load() }

// noteInitialize reads the capabilities off a raw initialize answer (the
// steering one is in its _meta, which the SDK's types keep as a map).
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

// DeleteAdvertised reports whether a recorded initialize answer
// advertises session/delete.
func DeleteAdvertised(caps []byte) bool {
	d := gjson.GetBytes(caps, "agentCapabilities.sessionCapabilities.delete")
	return d.Exists() && d.Type != gjson.Null
}
