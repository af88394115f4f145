//go:build unix

package proc

import "syscall"

// processExists reports whether a process pid exists (signal 0; one of
// another user's exists too).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
