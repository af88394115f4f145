package e2e_test

// The Claude suite: see claude_rig_test.go for how Claude runs offline. The
// scenarios every agent shares are its row of scenarios_test.go.

import (
	"encoding/json"
	"testing"
)

func TestClaude_AgentsProbeShowsClaudesCapabilities(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			ProbeError   string `json:"probe_error"`
			Capabilities struct {
				AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
				AgentCapabilities struct {
					LoadSession         bool                       `json:"loadSession"`
					SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
			}
		}
	}
	decodeJSON(t, r.mustRun("--json", "agents", "--probe").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != "claude" {
			continue
		}
		c := a.Capabilities
		if !a.Installed || a.ProbeError != "" || c.AgentInfo.Version != claudeACPVersion || !c.AgentCapabilities.LoadSession {
			t.Fatalf("claude probe: %+v", a)
		}
		for _, k := range []string{"resume", "list", "fork", "close"} {
			if _, ok := c.AgentCapabilities.SessionCapabilities[k]; !ok {
				t.Errorf("sessionCapabilities lacks %s: %v", k, c.AgentCapabilities.SessionCapabilities)
			}
		}
		r.assertNoAgentSurvives("the probe")
		return
	}
	t.Fatal("kandev agents lists no claude")
}
