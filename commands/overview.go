package commands

import (
	"fmt"
	"io"
)

// overview is what `kandev` with no arguments prints: the common flows, each
// with the command a user types, so a newcomer never starts from an error.
const overview = `kandev runs ACP coding agents in durable, resumable sessions (no daemon).

See it work first (a temporary home, the built-in demo agent):
  kandev demo

Everyday flows:
  kandev start "fix the flaky login test"       start a session, run the task, print its id
  kandev prompt --latest "now add a regression test"
                                                send the next message to a session
  kandev resume --latest                        get back in after a crash, a kill or a reboot
  kandev recap ID                               what happened so far, in one screen
  kandev list --resumable                       sessions you can pick up now
  kandev status ID                              why a session is (not) resumable, and what to run next

Housekeeping:
  kandev doctor                                 check the home, the agents and git
  kandev prune --older-than 30d                 delete finished sessions
  source <(kandev completion bash)              tab-complete commands, flags, agents and session ids

Every command: kandev COMMAND --help (each shows an example). All flags: kandev --help.
`

// writeOverview prints the overview.
func writeOverview(w io.Writer) { fmt.Fprint(w, overview) }
