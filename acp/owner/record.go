package owner

import (
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// The owner's writes: the record and the log change only through these,
// stamped with the job's clock and the current turn, and nothing is shown
// before it is on disk.

// now is the job's clock in UTC.
func (o *owner) now() time.Time {
	if o.job.Now != nil {
		return o.job.Now().UTC()
	}
	return time.Now().UTC()
}

// currentTurn is the turn the events written now belong to ("" between turns).
func (o *owner) currentTurn() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.turnID
}

// update changes the record under its lock and keeps the cached copy. A
// failed write is kept (storageErr) and stops the owner; the cached copy
// still changes, so the owner's own decisions stay consistent.
// Updates come from the turn, the connection's recorder and the SDK's
// permission handler: recMu orders them, and a failed one changes a copy.
func (o *owner) update(fn func(*state.Session)) {
	o.recMu.Lock()
	defer o.recMu.Unlock()
	o.updateLocked(fn)
}

// updateLocked is update for a caller that holds recMu.
func (o *owner) updateLocked(fn func(*state.Session)) {
	fn = o.withPendingUsage(fn) // usage.go: the totals of reports already in the log ride along
	s, err := o.job.Home.UpdateSession(o.job.SessionID, func(s *state.Session) error { fn(s); return nil })
	if err != nil {
		c := *o.s
		fn(&c)
		s = &c
		o.failWrite("the record of session "+o.job.SessionID, err)
	}
	o.s = s
	o.pendingUsage = nil
	if o.usageFlush != nil {
		o.usageFlush.Stop()
		o.usageFlush = nil
	}
}

// updateChanged is update for what only owners write (under the owner
// lock this one holds), so the cached record has it as the file does: when
// fn changes nothing in it, the record is neither read nor written again.
func (o *owner) updateChanged(fn func(*state.Session)) {
	o.recMu.Lock()
	defer o.recMu.Unlock()
	if o.pendingUsage == nil && !o.s.ChangedBy(fn) {
		return
	}
	o.updateLocked(fn)
}

// session is the cached record, for goroutines other than the owner's own.
func (o *owner) session() *state.Session {
	o.recMu.Lock()
	defer o.recMu.Unlock()
	return o.s
}

// append writes events to the log (fsync'd when durable) and then emits them:
// nothing is shown before it is on disk. A failed write is kept
// (storageErr) and nothing of it is shown.
func (o *owner) append(durable bool, evs ...*eventlog.Event) {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	evs, ok := o.write(durable, evs...)
	if ok && o.job.Emit != nil && !o.muted.Load() {
		for _, e := range evs {
			o.job.Emit(*e)
		}
	}
}

// record writes events to the log without showing them: for what the
// command reports in its own error line.
func (o *owner) record(evs ...*eventlog.Event) {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	o.write(true, evs...)
}

// write appends under emitMu, so the log's order is the order shown. Streamed
// text passes the redactor first, which may hold back the tail of a chunk that
// could still become a secret; what it returns is what was written.
func (o *owner) write(durable bool, evs ...*eventlog.Event) ([]*eventlog.Event, bool) {
	if evs = o.redactor.Events(evs); len(evs) == 0 {
		return nil, true
	}
	var err error
	if durable {
		err = o.log.AppendSync(evs...)
	} else {
		err = o.log.Append(evs...)
	}
	if err != nil {
		o.failWrite("the log of session "+o.job.SessionID, err)
		return nil, false
	}
	o.notifyFor(evs)
	return evs, true
}

func (o *owner) marker(kind history.MarkerKind, summary, diag string) {
	m := history.NewMarker(kind, summary, diag)
	m.TurnID = o.currentTurn()
	o.append(true, &m)
}

func (o *owner) setState(st string) {
	if o.s.State == st {
		return
	}
	o.update(func(s *state.Session) { s.State = st; s.LastActivityAt = o.now() })
	o.append(true, &eventlog.Event{Type: eventlog.EventState, State: st, TurnID: o.currentTurn()})
}

// ErrStorage marks a failed write of a session's log or record (a full
// disk, a read-only home); commands map it to exit 1.
var ErrStorage = errors.New("storage")

// StorageError is a failed write: what could not be written, and why.
type StorageError struct {
	What      string // "the log of session ID"
	SessionID string
	Err       error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("cannot write %s: %v; free space or make the home writable, then run kandev repair %s", e.What, e.Err, e.SessionID)
}

// Unwrap gives the cause (an *os.PathError, ...).
func (e *StorageError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrStorage) true.
func (e *StorageError) Is(target error) bool { return target == ErrStorage }

// failWrite keeps the first failed write; the running turn stops at the
// owner's next check and the command ends with it.
func (o *owner) failWrite(what string, err error) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	if o.writeErr == nil {
		o.writeErr = &StorageError{What: what, SessionID: o.job.SessionID, Err: err}
	}
}

// storageErr is the first failed write, nil when every write succeeded.
func (o *owner) storageErr() error {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	return o.writeErr
}
