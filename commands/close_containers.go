package commands

import (
	"context"
	"errors"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/state"
)

// stoppedContainers stops the running containers of sessions ids that no
// owner runs (their owner was killed: the container outlived it), as the
// owner would have when it closed; how many it stopped. An engine that
// fails is a warning.
func stoppedContainers(env *Env, h *state.Home, ids []string) int {
	cfg, err := env.Config()
	if err != nil {
		return 0
	}
	n := 0
	for _, id := range ids {
		s, err := h.LoadSession(id)
		if err != nil || !mayHaveContainer(s) {
			continue
		}
		if owner.Live(h, id) {
			continue // its owner stops its container as it ends
		}
		if err := container.StopSession(context.Background(), cfg.Runtime, h.Dir, id); err != nil {
			if !errors.Is(err, container.ErrNotRunning) {
				env.Out.Warn("session " + id + ": " + err.Error())
			}
			continue
		}
		n++
	}
	return n
}

// mayHaveContainer reports whether a container of session s may exist: it
// runs in one and its agent was launched once. A start whose engine failed
// launched nothing, and later commands leave its engine alone.
func mayHaveContainer(s *state.Session) bool {
	return s.Runtime == config.RuntimeContainer && s.AgentLaunched
}
