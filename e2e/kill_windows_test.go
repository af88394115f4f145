package e2e_test

import (
	"fmt"
	"os"
	"syscall"
)

// kill ends process pid for SIGKILL, the one signal Windows can send to
// another process; any other is an error.
func kill(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return fmt.Errorf("cannot send %v to process %d on Windows", sig, pid)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// stopGroup cannot stop a process group on Windows: the test that needs it
// fails there instead of passing without it.
func stopGroup(pgid int) { panic(fmt.Sprintf("cannot stop process group %d on Windows", pgid)) }

// freeze does nothing on Windows: a process cannot be stopped from outside.
func freeze(int) {}
