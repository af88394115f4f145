// Command kandev runs ACP coding agents in durable, resumable sessions.
package main

import (
	"os"

	"github.com/kandev/kandev/commands"
	"github.com/kandev/kandev/internal/supervise"
)

func main() {
	// A copy of kandev started as an agent's supervisor supervises and
	// exits here (docs/internals.md, the processes of one command).
	supervise.Main()
	os.Exit(commands.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
