package commands

import (
	"context"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/state"
)

// deliverPrompt sends a prompt, at most once per session and key when a
// key is given (--key).
func deliverPrompt(ctx context.Context, job owner.Job, key string, follow bool) (*owner.Delivery, error) {
	if key != "" {
		if err := checkKey(key); err != nil {
			return nil, err
		}
	}
	return owner.Dial(ctx, job, owner.Request{Follows: owner.FollowsInput, Key: key, NoFollow: !follow})
}

// createOnce creates the session, or with --key finds the one an earlier
// start with the same key created (existing).
func (c *startCmd) createOnce(env *Env, h *state.Home, cwd, agent, prompt string, withSetup func(*state.Session)) (*state.Session, bool, error) {
	if c.Key == "" {
		s, err := c.create(env, h, cwd, agent, prompt, withSetup)
		return s, false, err
	}
	if err := checkKey(c.Key); err != nil {
		return nil, false, err
	}
	return h.ReserveStartKey(c.Key, func() (*state.Session, error) {
		s, err := c.create(env, h, cwd, agent, prompt, func(s *state.Session) { withSetup(s); s.StartKey = c.Key })
		return s, err
	})
}

// again follows the first turn of a session an earlier start --key created.
func (c *startCmd) again(env *Env, job owner.Job, s *state.Session) (*owner.Result, error) {
	if s.InitialPrompt == "" && s.Turns == 0 {
		return &owner.Result{Session: s}, nil // started without a prompt: nothing to follow
	}
	job.Detach, job.Linger = nil, 0
	return dialResult(env, job, owner.Request{Follows: owner.FollowsFirstTurn, Key: c.Key})
}

// MaxKeyBytes bounds an idempotency key.
const MaxKeyBytes = 256

// checkKey refuses a key that is too long or holds control characters or
// only spaces: it is a name, shown in logs and compared byte for byte.
func checkKey(key string) error {
	if len(key) > MaxKeyBytes || strings.TrimSpace(key) == "" {
		return usagef("--key must be 1 to %d bytes and not only spaces", MaxKeyBytes)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return usagef("--key must not contain control characters")
		}
	}
	return nil
}
