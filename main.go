// Command kandev runs ACP coding agents in durable, resumable sessions.
package main

import (
	"os"
	"time"

	"github.com/kandev/kandev/commands"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/internal/supervise"
	"github.com/kandev/kandev/notify"
)

func main() {
	// Signals that come while kandev starts wait for the command to say
	// what they mean to it.
	commands.HoldSignals()
	// A copy of kandev started as an agent's supervisor supervises and
	// exits here (docs/internals.md, the processes of one command).
	supervise.Main()
	// The relay of an agent in a container runs and exits here
	// (docs/containers.md).
	container.RelayMain(os.Args[1:])
	code := commands.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// A note sent as the command ends reaches its hook (a runner that
	// reads its stdin takes it at once; one that does not is given up).
	notify.Flush(2 * time.Second)
	os.Exit(code)
}
