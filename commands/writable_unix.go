//go:build unix

package commands

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// writable says why this process cannot write path (nil: it can), without
// writing: access(2) with W_OK, which answers for a read-only mount and an
// immutable file even to root (whom file modes do not stop).
func writable(path string, _ fs.FileInfo) error { return unix.Access(path, unix.W_OK) }
