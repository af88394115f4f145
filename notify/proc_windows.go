//go:build windows

package notify

import (
	"os"
	"syscall"
)

const createNewProcessGroup = 0x00000200

func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: createNewProcessGroup}
}

func groupAttr() *syscall.SysProcAttr { return nil }

func killGroup(p *os.Process) error { return p.Kill() }
