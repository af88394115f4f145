//go:build !linux && !darwin && !windows

package autostart

import (
	"fmt"
	"runtime"
)

// Enable: kandev knows no login-time scheduler on this system.
func Enable(j Job) (Status, error) {
	return Status{}, fmt.Errorf("%w: kandev knows none on %s; run kandev recover --all from your login script", ErrNoScheduler, runtime.GOOS)
}

// Disable: there is nothing to remove.
func Disable(home string) (Status, error) { return Status{}, nil }

// Check: never on.
func Check(home string) Status { return Status{} }
