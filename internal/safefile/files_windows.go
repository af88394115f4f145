package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// Open opens a file of the sessions directory without following
// a reparse point (a symbolic link or a junction) in its last component: it
// opens the point itself (FILE_FLAG_OPEN_REPARSE_POINT) and refuses it with
// ErrSymlink. The file is shared for deletion too, so a record can be
// replaced by rename while a reader has it open, as on unix.
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 && flag&os.O_TRUNC == 0 {
		// Without FILE_WRITE_DATA every write lands at the end, as O_APPEND does.
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	default:
		create = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS // a directory opens for reading too
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(name, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("session file %s %w: kandev refuses to follow it; remove the link", path, ErrSymlink)
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, &os.PathError{Op: "open", Path: path, Err: BareCause(err)}
		}
	}
	return f, nil
}

// ReadRecordFile appends the file name in the directory dirPath ("": name
// is a path) to buf, opened as Open does. Windows has no openat:
// dir is not used.
func ReadRecordFile(_ int, dirPath, name string, buf []byte) ([]byte, error) {
	path := name
	if dirPath != "" {
		path = filepath.Join(dirPath, name)
	}
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// AtCWD stands for openat's AT_FDCWD, which ReadRecordFile does not use here.
const AtCWD = -1

// RenameReplace is os.Rename for a rename over an existing file. Windows
// refuses to replace a file while a handle that does not share deletion is
// open on it, and Wine refuses while any handle is open, sharing or not:
// another kandev reading the record (a follower of the session) makes the
// owner's replace fail with "Access is denied" for the moment of its read.
// The replace is tried again until that reader is done, within a bound,
// so a real refusal (a read-only file) is still reported.
func RenameReplace(from, to string) error {
	deadline := time.Now().Add(2 * time.Second)
	wait := time.Millisecond
	for {
		err := os.Rename(from, to)
		if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}
