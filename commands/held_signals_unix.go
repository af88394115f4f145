//go:build unix

package commands

import (
	"os"
	"syscall"
	"time"
)

// dieOf ends the process by sig, as if it had never been caught.
func dieOf(sig os.Signal) {
	s := sig.(syscall.Signal)
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second) // delivery to oneself is immediate; this is a bound
	os.Exit(128 + int(s))
}
