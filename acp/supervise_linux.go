package acp

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe is this binary; /proc/self/exe still works when kandev was
// upgraded (its file replaced) while the owner runs.
func selfExe() string { return "/proc/self/exe" }

// becomeSubreaper makes orphans of the agent's tree children of the
// supervisor instead of init, so none escapes the sweep.
func becomeSubreaper() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

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
