package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// ownerLock is the one kandev process that runs a session's agent. It holds an
// exclusive flock on the session's owner lock for its whole life; the kernel
// drops the lock when the process dies, so "owner alive" is a lock probe.
type ownerLock struct {
	ID string
	fl *flock.Flock
}

// AcquireOwner makes this process the owner of session id, or returns
// ErrOwnerBusy if another live process is. A failed try is repeated briefly,
// because a concurrent ProbeOwner holds the lock for an instant.
func (h *Home) AcquireOwner(id string) (*ownerLock, error) {
	fl := newLock(h.LockPath(id))
	for i := 0; ; i++ {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("owner lock of session %s: %w", id, lockFileError(fl.Path(), err))
		}
		if ok {
			return &ownerLock{ID: id, fl: fl}, nil
		}
		if i == 4 {
			return nil, fmt.Errorf("session %s: %w", id, ErrOwnerBusy)
		}
		time.Sleep(time.Duration(2+i*3) * time.Millisecond)
	}
}

// Release gives up ownership.
func (o *ownerLock) Release() error {
	if o == nil || o.fl == nil {
		return nil
	}
	return o.fl.Unlock()
}

// OwnerAlive reports whether some process holds session id's owner lock.
func (h *Home) OwnerAlive(id string) (bool, error) {
	fl := newLock(h.LockPath(id))
	ok, err := fl.TryLock()
	if err != nil {
		return false, fmt.Errorf("owner lock of session %s: %w", id, lockFileError(fl.Path(), err))
	}
	if ok {
		_ = fl.Unlock()
		return false, nil
	}
	return true, nil
}

// LiveOwners are the ids of the sessions whose owner lock some process
// holds, in id order. It lists the sessions' lock files and probes each
// (OwnerAlive): it reads no session record, so its cost does not grow with
// what the records hold.
func (h *Home) LiveOwners() ([]string, error) {
	entries, err := os.ReadDir(h.sessionsDir())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ownerLockSuffix)
		if !ok || ValidateID(id) != nil {
			continue
		}
		if alive, _ := h.OwnerAlive(id); alive {
			out = append(out, id)
		}
	}
	return out, nil
}

// AgentAlive reports whether an agent of session id is still being stopped
// after its owner returned: its supervisor holds the agent lock until the
// agent's whole process tree is gone (a lock probe, like OwnerAlive).
func (h *Home) AgentAlive(id string) bool {
	fl := newLock(h.AgentLockPath(id))
	ok, err := fl.TryLock()
	if err != nil || ok {
		if ok {
			_ = fl.Unlock()
		}
		return false
	}
	return true
}

// AgentLeftoversPossible reports whether processes of session id's agent
// may have outlived it and its supervisor: the supervisor marks the agent
// lock file (one byte, a hole) while the agent runs, and empties it once no
// process of the agent's is left. A marked file that no supervisor holds
// says one was killed before it could end the agent's tree (SIGKILL, the
// OOM killer, an owner killed mid-turn); only then is reading every
// process's environment (TaggedProcesses) worth its cost.
func (h *Home) AgentLeftoversPossible(id string) bool {
	st, err := os.Lstat(h.AgentLockPath(id))
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}

// AwaitAgentGone waits, at most timeout, until no agent of session id is
// alive: an owner launches the session's agent only once the previous
// one, still shutting down under its supervisor, is gone. It reports
// whether it is.
func (h *Home) AwaitAgentGone(ctx context.Context, id string, timeout time.Duration) bool {
	if !h.AgentAlive(id) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fl := newLock(h.AgentLockPath(id))
	ok, _ := fl.TryLockContext(ctx, 5*time.Millisecond)
	if ok {
		_ = fl.Unlock()
	}
	return ok
}

// newLock is the flock of a session's lock file at path, opened with
// lockOpenFlags: a symbolic link there is refused, never followed.
func newLock(path string) *flock.Flock {
	return flock.New(path, flock.SetPermissions(filePerm), flock.SetFlag(lockOpenFlags))
}

// isOwnerBusy reports whether err says another process owns the session.
func isOwnerBusy(err error) bool { return errors.Is(err, ErrOwnerBusy) }

// LockWarmPool takes the home's warm.lock, which orders owners that start
// to linger, so that two of them never both see room for one more (the
// pool of max_warm, docs/configuration.md). It blocks; the returned func releases it.
func (h *Home) LockWarmPool() (func(), error) {
	fl := newLock(filepath.Join(h.Dir, "warm.lock"))
	if err := fl.Lock(); err != nil {
		return nil, fmt.Errorf("lock the warm pool: %w", lockFileError(fl.Path(), err))
	}
	return func() { _ = fl.Unlock() }, nil
}
