package owner

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedProcAttr starts a detached owner in its own process group with a
// console of its own that has no window: the caller's Ctrl-C does not reach
// it, and the agents it starts open no console window either.
func detachedProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW}
}
