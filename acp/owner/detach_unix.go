//go:build unix

package owner

import "syscall"

// detachedProcAttr starts a detached owner in a process session of its own,
// away from the caller's terminal.
func detachedProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// terminate sends SIGTERM to a detached owner: it shuts its turn down as
// it would on a machine's shutdown (turn_ended shutdown, continued once).
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
