//go:build unix

package e2e_test

import "syscall"

// kill sends sig to process pid.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// stopGroup stops (SIGSTOP) every process of the process group pgid.
func stopGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGSTOP) }

// freeze stops (SIGSTOP) process pid, so that it sees nothing until killed.
func freeze(pid int) { _ = syscall.Kill(pid, syscall.SIGSTOP) }
