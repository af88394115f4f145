package state

import (
	"errors"

	"github.com/kandev/kandev/eventlog"
)

// Held is a session whose owner lock this process holds to change it
// without running its agent (a setup change, a repair, a rewind, a switch,
// done or archive, a settled pause, prune). No owner starts while it is
// held, so the record it reads is the one it changes, and the events it
// appends follow its changes in the log. Release ends it.
type Held struct {
	ID   string
	home *Home
	lock *ownerLock
	opts eventlog.OpenLogOptions
	log  *eventlog.EventLog
}

// Hold takes session id's owner lock, or returns ErrOwnerBusy while a live
// process owns the session. opts are how its log is opened, on first use.
func (h *Home) Hold(id string, opts eventlog.OpenLogOptions) (*Held, error) {
	lock, err := h.AcquireOwner(id)
	if err != nil {
		return nil, err
	}
	return &Held{ID: id, home: h, lock: lock, opts: opts}, nil
}

// Update changes the session's record under the lock (UpdateSession) and
// returns it as written.
func (x *Held) Update(fn func(*Session) error) (*Session, error) {
	return x.home.UpdateSession(x.ID, fn)
}

// Log is the session's log, opened for appending on the first call, which
// also returns the bytes of a torn last line it cut off (0 after).
func (x *Held) Log() (log *eventlog.EventLog, tornBytes int64, err error) {
	if x.log != nil {
		return x.log, 0, nil
	}
	x.log, tornBytes, err = x.home.OpenLog(x.ID, x.opts)
	return x.log, tornBytes, err
}

// Append appends evs to the session's log and syncs them: they are on disk
// when it returns.
func (x *Held) Append(evs ...*eventlog.Event) error {
	log, _, err := x.Log()
	if err != nil {
		return err
	}
	return log.AppendSync(evs...)
}

// Release closes the log and gives the owner lock up.
func (x *Held) Release() error {
	var err error
	if x.log != nil {
		err = x.log.Close()
	}
	return errors.Join(err, x.lock.Release())
}
