package e2e_test

// The Copilot suite: the real Copilot CLI (see copilot_rig_test.go) driven
// through the built kandev binary, offline. The scenarios every agent
// shares are its row of scenarios_test.go.

import (
	"testing"
)

func TestCopilot_AgentsProbeShowsItsCapabilities(t *testing.T) {
	t.Parallel()
	caps := newCopilotRig(t).probe(t, copilotVersion)
	got := []string{}
	for k := range caps.SessionCapabilities {
		got = append(got, k)
	}
	if len(got) != 2 || caps.SessionCapabilities["list"] == nil || caps.SessionCapabilities["close"] == nil {
		t.Errorf("sessionCapabilities %v, want list and close", got)
	}
}
