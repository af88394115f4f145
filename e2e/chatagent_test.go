package e2e_test

// What the Copilot and OpenCode rigs share: both agents are real CLIs that
// talk to testdata/fakemodel -format chat, so the same probe check applies
// to either. Their rows of the scenario table are in rig_test.go.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatAgent is a world whose agent profile name is a real CLI behind the
// fake chat server; every process of the rig carries tagKey=tagValue in its
// environment.
type chatAgent struct {
	*world
	name   string // the agent profile
	label  string // how messages name the agent
	fake   *fakeChat
	tagKey string
	tagVal string
}

// live is the pids of the rig's agent processes still running.
func (r *chatAgent) live() []int { return liveProcessesWithEnv(r.tagKey, r.tagVal) }

// assertNoAgentSurvives waits up to 10 s for every process of this rig and
// of the session id, if any, to be gone.
func (r *chatAgent) assertNoAgentSurvives(id, after string) {
	r.t.Helper()
	waitGone(r.t, r.label+" processes", after, func() []int {
		live := r.live()
		if id != "" {
			live = append(live, liveProcessesWithEnv("KANDEV_SESSION_ID", id)...)
		}
		return live
	})
}

// probedCapabilities is what `kandev agents --probe` reports of an agent.
type probedCapabilities struct {
	LoadSession         bool                       `json:"loadSession"`
	SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
}

// probe runs `kandev agents --probe` and returns the agent capabilities it
// reports for the rig's agent, checking that the agent is installed, loads
// sessions, is at version, cost no model request and left no process.
func (r *chatAgent) probe(t *testing.T, version string) probedCapabilities {
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			Capabilities struct {
				AgentCapabilities probedCapabilities             `json:"agentCapabilities"`
				AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
			}
			ProbeError string `json:"probe_error"`
		}
	}
	r.generousHandshake()
	decodeJSON(t, r.mustRun("agents", "--probe", "--json").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != r.name {
			continue
		}
		caps := a.Capabilities.AgentCapabilities
		if !a.Installed || !caps.LoadSession || a.Capabilities.AgentInfo.Version != version {
			t.Fatalf("%s: %+v", r.name, a)
		}
		if n := len(r.fake.turns()); n != 0 {
			t.Errorf("probing sent %d model requests", n)
		}
		r.assertNoAgentSurvives("", "kandev agents --probe exited")
		return caps
	}
	t.Fatalf("kandev agents lists no %s", r.name)
	return probedCapabilities{}
}

// generousHandshake gives the probe 3 minutes for a real CLI's first start
// on a loaded machine (a CI run under a load average of 22 once took more
// than the 20 s the probe had then), unless the rig's config sets its own.
func (r *chatAgent) generousHandshake() {
	path := filepath.Join(r.home, "config.toml")
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "[agent]\n") {
		return
	}
	if err := os.WriteFile(path, append([]byte("[agent]\nhandshake_timeout_seconds = 180\n\n"), b...), 0o600); err != nil {
		r.t.Fatal(err)
	}
}
