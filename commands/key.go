package commands

import (
	"context"

	"github.com/kandev/kandev/acp"
)

// deliverPrompt sends a prompt, at most once per session and key when a
// key is given (--key).
func deliverPrompt(ctx context.Context, job acp.Job, key string, follow bool) (*acp.Delivery, error) {
	if key == "" {
		return acp.Deliver(ctx, job, follow)
	}
	return acp.DeliverOnce(ctx, job, key, follow)
}
