package commands

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/state"
)

// containerChecks compare the home's containers with its sessions
// (docs/containers.md): a container whose session is gone is a problem
// (nothing will ever use or remove it); a live session whose container is
// gone is said, as the next prompt creates one and restores the
// conversation. Without an engine and container sessions, nothing is checked.
func containerChecks(ctx context.Context, h *state.Home, cfg *config.Config) []check {
	all, _ := h.ListSessions()
	sessions := map[string]*state.Session{}
	using := 0
	for _, s := range all {
		sessions[s.ID] = s
		if mayHaveContainer(s) {
			using++
		}
	}
	if using == 0 {
		if _, err := exec.LookPath("podman"); err != nil && cfg.Runtime.Engine == "" {
			if _, err := exec.LookPath("docker"); err != nil {
				return nil
			}
		}
	}
	cs, err := container.All(ctx, cfg.Runtime, h.Dir)
	if err != nil {
		if using == 0 {
			return nil // no session runs in a container: an engine that does not answer is not kandev's problem
		}
		return []check{{Name: "containers", Message: err.Error(), Fix: "start the engine, or set [runtime] engine"}}
	}
	var out []check
	have := map[string]bool{}
	for _, c := range cs {
		have[c.Session] = true
		if sessions[c.Session] == nil {
			out = append(out, check{Name: "container " + c.ID, Message: fmt.Sprintf("%s, of session %s, which this home no longer has", c.State, c.Session),
				Fix: "remove it: " + cfgEngine(cfg) + " rm -f " + c.ID})
		}
	}
	for _, s := range all {
		if s.Runtime == config.RuntimeContainer && s.AgentLaunched && !state.IsTerminal(s.State) && !have[s.ID] {
			out = append(out, check{Name: "session " + s.ID, OK: true, Message: "its container is gone; the next prompt creates one and restores the conversation"})
		}
	}
	if len(out) == 0 {
		out = append(out, check{Name: "containers", OK: true, Message: fmt.Sprintf("%d container(s), each of a session of this home", len(cs))})
	}
	return out
}

// cfgEngine names the engine for a fix line.
func cfgEngine(cfg *config.Config) string {
	if e, err := container.FindEngine(cfg.Runtime.Engine); err == nil {
		return e.Name
	}
	return "podman"
}
