package supervise

import (
	"syscall"

	"github.com/kandev/kandev/internal/procstat"
)

// SelfExe is this binary; /proc/self/exe still works when kandev was
// upgraded (its file replaced) while the owner runs.
func SelfExe() string { return "/proc/self/exe" }

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2) (the syscall
// package has no name for it).
const prSetChildSubreaper = 36

// becomeSubreaper makes orphans of the agent's tree children of the
// supervisor instead of init, so none escapes the sweep.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0)
}

// agentSysProcAttr kills the agent if the supervisor itself is SIGKILLed.
func agentSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// leftovers are the processes to kill once the agent is gone: the
// supervisor's tree, complete because it is a subreaper.
func leftovers(string) []int { return ownLeftovers() }

// nothingLeft reports, without reading /proc, that the agent left no
// process behind: the supervisor is a subreaper, so every process of the
// agent's tree still there is its child, and with no child there is none.
// (It reaps a child that has exited; sweep reaps the rest.)
func nothingLeft() bool {
	_, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
	return err == syscall.ECHILD
}

// The process facts below come from internal/procstat, as state's do: the
// supervisor does not link state (see the package comment).

// processStart is when pid started, "" for one that is gone or a zombie.
func processStart(pid int) string { return procstat.Start(pid) }

// descendants lists the pids below pid in the process tree, parents before
// their children.
func descendants(pid int) []int { return procstat.Below(procstat.ChildrenByParent(), pid) }
