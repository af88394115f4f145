package acp

import (
	"os"
	"testing"

	"github.com/kandev/kandev/internal/supervise"
)

// TestMain lets the launch tests start this test binary as the agent's
// supervisor, as kandev starts itself.
func TestMain(m *testing.M) {
	supervise.Main()
	os.Exit(m.Run())
}
