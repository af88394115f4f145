//go:build !unix

package state

import "os"

// lockOpenFlags is how flock opens a lock file: created when missing.
var lockOpenFlags = os.O_CREATE | os.O_RDONLY

// lockFileError returns err: refusing links is the unix open's job.
func lockFileError(path string, err error) error { return err }
