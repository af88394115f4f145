package supervise

import (
	"os"
	"slices"
	"syscall"

	"github.com/kandev/kandev/internal/proc"
)

// SelfExe is this binary.
func SelfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

// becomeSubreaper: macOS has no subreaper; leftovers finds orphans by tag.
func becomeSubreaper() {}

// agentSysProcAttr: macOS has no parent-death signal. The agent outlives a
// SIGKILLed supervisor only until the owner's next start, which ends every
// process carrying the session tag.
func agentSysProcAttr() *syscall.SysProcAttr { return nil }

// leftovers are the processes to kill once the agent is gone: the
// supervisor's tree, and the processes of this launch (by environment tag)
// that were reparented to launchd when their parent died. The tag is per
// launch, not per session, so a later owner's new agent is never swept.
func leftovers(launch string) []int {
	out := ownLeftovers()
	for _, pid := range proc.ProcessesWithEnv(launch) {
		if !slices.Contains(out, pid) && proc.ProcessStart(pid) != "" {
			out = append(out, pid)
		}
	}
	return out
}

// nothingLeft: without a subreaper, orphans of the agent's tree are not the
// supervisor's children, so only sweep can tell.
func nothingLeft() bool { return false }

// On macOS the supervisor reads process facts through state (sysctl).
func processStart(pid int) string { return proc.ProcessStart(pid) }

func descendants(pid int) []int { return proc.Descendants(pid) }
