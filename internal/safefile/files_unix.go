//go:build unix

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open opens a file of the sessions directory without following
// a symbolic link in its last component: a link is refused with ErrSymlink.
// It opens by descriptor and wraps it with os.NewFile: os.OpenFile also
// tries to register every file with the network poller, four more system
// calls per open that fail or undo each other for a regular file.
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := RetryEINTR(func() (int, error) {
		return unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err == nil {
		return os.NewFile(uintptr(fd), path), nil
	}
	if err == unix.ELOOP {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("session file %s %w: kandev refuses to follow it; remove the link", path, ErrSymlink)
		}
	}
	return nil, &os.PathError{Op: "open", Path: path, Err: err}
}

// ReadRecordFile is ReadFile for the small files replaced whole
// (records, leases) that a listing reads by the thousand: plain system
// calls into one buffer (no poller registration, no growing reads), and no
// read to confirm the end once a read comes back short: a record is only
// ever replaced by rename, never written in place, so the file a name
// points at does not grow. Any error is left to ReadFile, which
// names it. name is opened in the directory open as dir, dirPath (AtCWD
// and "": name is a path). The file is appended to buf, whose room is used
// first.
func ReadRecordFile(dir int, dirPath, name string, buf []byte) ([]byte, error) {
	fd, err := RetryEINTR(func() (int, error) {
		return unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err == unix.ENOENT { // no lease, a record removed meanwhile: common, and cheap to say
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dirPath, name), Err: err}
	}
	if err != nil {
		return ReadFile(filepath.Join(dirPath, name))
	}
	defer unix.Close(fd)
	if cap(buf)-len(buf) < 512 {
		buf = slices.Grow(buf, 4096)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return ReadFile(filepath.Join(dirPath, name))
		}
		buf = buf[:len(buf)+n]
		if n < room {
			return buf, nil
		}
	}
}

// RetryEINTR calls fn again while it is interrupted by a signal.
func RetryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// AtCWD opens a path as given (openat's AT_FDCWD).
const AtCWD = unix.AT_FDCWD

// RenameReplace is os.Rename for a rename over an existing file: on unix a
// reader that has the old file open never stands in its way.
func RenameReplace(from, to string) error { return os.Rename(from, to) }
