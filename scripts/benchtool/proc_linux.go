//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the agent if this tool dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
