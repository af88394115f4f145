package state

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// Owner is the one kandev process that runs a session's agent. It holds an
// exclusive flock on the session's owner lock for its whole life; the kernel
// drops the lock when the process dies, so "owner alive" is a lock probe.
type Owner struct {
	ID string
	fl *flock.Flock
}

// AcquireOwner makes this process the owner of session id, or returns
// ErrOwnerBusy if another live process is. A failed try is repeated briefly,
// because a concurrent ProbeOwner holds the lock for an instant.
func (h *Home) AcquireOwner(id string) (*Owner, error) {
	fl := flock.New(h.LockPath(id), flock.SetPermissions(filePerm))
	for i := 0; ; i++ {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("owner lock of session %s: %w", id, err)
		}
		if ok {
			return &Owner{ID: id, fl: fl}, nil
		}
		if i == 4 {
			return nil, fmt.Errorf("session %s: %w", id, ErrOwnerBusy)
		}
		time.Sleep(time.Duration(2+i*3) * time.Millisecond)
	}
}

// Release gives up ownership.
func (o *Owner) Release() error {
	if o == nil || o.fl == nil {
		return nil
	}
	return o.fl.Unlock()
}

// OwnerAlive reports whether some process holds session id's owner lock.
// A listing probes it for every session whose record says a turn runs, so
// it is the bare system calls of flock's TryLock and Unlock (open, a
// non-blocking flock(2), close, which drops the lock) without the file
// object's poller registration and mode changes around them: the same lock
// AcquireOwner takes, probed the same way.
func (h *Home) OwnerAlive(id string) (bool, error) {
	path := h.LockPath(id)
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CREAT|syscall.O_CLOEXEC, filePerm)
	})
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	_, err = retryEINTR(func() (int, error) { return 0, syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) })
	switch {
	case err == syscall.EWOULDBLOCK:
		return true, nil
	case err != nil:
		return false, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return false, nil
}

// retryEINTR calls fn again while it is interrupted by a signal.
func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// IsOwnerBusy reports whether err says another process owns the session.
func IsOwnerBusy(err error) bool { return errors.Is(err, ErrOwnerBusy) }
