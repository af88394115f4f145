package commands

import (
	"context"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// deliverPrompt sends a prompt, at most once per session and key when a
// key is given (--key).
func deliverPrompt(ctx context.Context, job acp.Job, key string, follow bool) (*acp.Delivery, error) {
	if key == "" {
		return acp.Deliver(ctx, job, follow)
	}
	return acp.DeliverOnce(ctx, job, key, follow)
}

// createOnce creates the session, or with --key finds the one an earlier
// start with the same key created (existing).
func (c *StartCmd) createOnce(env *Env, h *state.Home, cwd, agent, prompt string) (*state.Session, bool, error) {
	if c.Key == "" {
		s, err := c.create(env, h, cwd, agent, prompt)
		return s, false, err
	}
	return h.ReserveStartKey(c.Key, func() (*state.Session, error) {
		s, err := c.createWith(env, h, cwd, agent, prompt, func(s *state.Session) { s.StartKey = c.Key })
		return s, err
	})
}

// again follows the first turn of a session an earlier start --key created.
func (c *StartCmd) again(env *Env, job acp.Job, s *state.Session) (*acp.Result, error) {
	if s.InitialPrompt == "" && s.Turns == 0 {
		return &acp.Result{Session: s}, nil // started without a prompt: nothing to follow
	}
	job.Detach, job.Linger = nil, 0
	return acp.FollowInitial(env.Ctx, job)
}
