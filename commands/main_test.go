package commands

import (
	"os"
	"strings"
	"testing"

	"github.com/kandev/kandev/internal/supervise"
)

// TestMain lets this test binary stand in for kandev in the processes a
// command starts ({kandev} demo-agent, an agent's supervisor): go test runs
// it with -test. flags only, kandev's children with a command word.
func TestMain(m *testing.M) {
	supervise.Main()
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
