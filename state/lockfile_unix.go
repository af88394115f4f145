//go:build unix

package state

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/kandev/kandev/internal/safefile"
	"golang.org/x/sys/unix"
)

// lockOpenFlags is how flock opens a lock file: created when missing, and
// never through a symbolic link in its last component (O_NOFOLLOW), so a
// link planted in the sessions directory cannot make kandev create or lock
// a file outside the home. AIX and Solaris lock only files open for writing.
var lockOpenFlags = func() int {
	flag := os.O_CREATE | os.O_RDONLY
	switch runtime.GOOS {
	case "aix", "solaris", "illumos":
		flag = os.O_CREATE | os.O_RDWR
	}
	return flag | unix.O_NOFOLLOW | unix.O_CLOEXEC
}()

// lockFileError names a lock file that is a symbolic link (ErrSymlink);
// other errors are returned as they are.
func lockFileError(path string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("session file %s %w: kandev refuses to follow it; remove the link", path, safefile.ErrSymlink)
		}
	}
	return err
}
