package commands

import (
	"fmt"
	"io/fs"
)

// writable says why this process cannot write path (nil: it can), without
// writing: on Windows, a file marked read-only.
func writable(path string, info fs.FileInfo) error {
	if !info.IsDir() && info.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%w: the file is read-only", fs.ErrPermission)
	}
	return nil
}
