// Package safefile opens, reads and appends to the files kept under
// $KANDEV_HOME: 0600, never through a symbolic link, an append either whole
// or cut back. The platform detail (O_NOFOLLOW, Windows share modes) is here.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrSymlink is a session file that is a symbolic link. Session files are
// opened without following links, so no file outside the home is ever read
// or written in a session's name.
var ErrSymlink = errors.New("is a symbolic link")

// ReadFile is os.ReadFile through Open.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// AppendWhole appends data (whole lines) to f, opened with O_APPEND by the
// only writer of the file, so that no partial line is left on it: when the
// write fails or comes back short (a full disk, an I/O error), the file is
// cut back to the end of the last whole line written, and the next append
// starts on a fresh line instead of gluing onto a partial one. The whole
// lines that did reach the file stay: a follower of the file (a command
// showing a detached owner's turn) may already have shown them. kept is how
// many lines of data are on the file; the error names path and wraps the
// cause.
func AppendWhole(f AppendFile, path string, data []byte) (kept int, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("append to %s: %w", path, BareCause(err))
	}
	n, err := f.Write(data)
	if err == nil && n == len(data) {
		return bytes.Count(data, []byte{'\n'}), nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	whole := 0
	if n > 0 {
		whole = bytes.LastIndexByte(data[:n], '\n') + 1
	}
	if terr := f.Truncate(st.Size() + int64(whole)); terr != nil {
		return 0, fmt.Errorf("append to %s: %w (cutting back the partial line failed too: %v; run kandev repair once the disk is writable)", path, BareCause(err), BareCause(terr))
	}
	return bytes.Count(data[:whole], []byte{'\n'}), fmt.Errorf("append to %s: %w", path, BareCause(err))
}

// AppendFile is what AppendWhole needs of an *os.File; tests put a failing
// disk behind it.
type AppendFile interface {
	Stat() (os.FileInfo, error)
	Write([]byte) (int, error)
	Truncate(size int64) error
}

// BareCause drops the *os.PathError around err (its path is already in our
// message), keeping the errno for errors.Is.
func BareCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AppendLines appends whole lines to the session file at path (created
// 0600 if missing) and syncs them, never through a symbolic link: a link is
// refused with ErrSymlink, so a file a link points at, inside the home or
// not, is never created or written.
func AppendLines(path string, data []byte) error {
	f, err := Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := AppendWhole(f, path, data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, BareCause(err))
	}
	return f.Close()
}

// RefuseLinkedDirs is nil unless one of the home's folders dirs is a
// symbolic link (ErrSymlink): every file kandev makes in it would land
// wherever the link points, outside the home.
func RefuseLinkedDirs(dirs ...string) error {
	for _, d := range dirs {
		if st, err := os.Lstat(d); err == nil && st.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(d)
			return fmt.Errorf("folder %s %w (to %s): kandev refuses to follow it out of its home; replace the link by a folder (rm %s, then move what %s holds into %s)", d, ErrSymlink, target, d, target, d)
		}
	}
	return nil
}

// RefuseLinks is nil unless one of paths is a symbolic link (ErrSymlink).
func RefuseLinks(paths ...string) error {
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("session file %s %w: kandev refuses to follow it; remove the link", p, ErrSymlink)
		}
	}
	return nil
}
