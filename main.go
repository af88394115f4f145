// Command kandev runs ACP coding agents in durable, resumable sessions.
package main

import (
	"os"

	"github.com/kandev/kandev/commands"
)

func main() {
	os.Exit(commands.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
