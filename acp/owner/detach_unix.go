//go:build unix

package owner

import "syscall"

// detachedProcAttr starts a detached owner in a process session of its own,
// away from the caller's terminal.
func detachedProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
