//go:build unix

package notify

import (
	"os"
	"syscall"
)

// detachedAttr puts the runner in its own process session: no signal to the
// owner's terminal or group reaches it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// groupAttr makes the hook the leader of its own process group, so a
// timeout kills whatever it started too.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
