package owner

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedProcAttr starts a detached owner in its own process group with a
// console of its own that has no window: the caller's Ctrl-C does not reach
// it, and the agents it starts open no console window either.
func detachedProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW}
}

// terminate is not offered on Windows: a detached owner has no SIGTERM to
// receive, and its turn goes on (kandev stop ends it).
func terminate(pid int) error { return errors.ErrUnsupported }
