package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kandev/kandev/internal/safefile"
)

// EventLog appends events to one session's log. Only the owner of a session
// opens it for appending, so seq numbers are assigned here without gaps.
//
// Durability: Append hands each batch to the kernel in one write(2) before it
// returns, so an appended event survives the kandev process being killed.
// Sync adds fsync(2), which the owner calls at turn start and end, on markers
// and on state changes, so those survive a power loss too; a Sync with
// nothing written since the last one (Close after a durable append) has
// nothing to flush and makes no system call.
type EventLog struct {
	mu        sync.Mutex
	f         logFile
	unsynced  bool // written (or cut back) since the last successful fsync
	path      string
	sessionID string
	nextSeq   int64
	buf       bytes.Buffer
	redact    func(*Event)
	now       func() time.Time
}

// OpenLogOptions tunes OpenLog.
type OpenLogOptions struct {
	Redact func(*Event)     // applied to every event before it is written
	Now    func() time.Time // clock; time.Now when nil
}

// ErrNotFound is a log that does not exist (or holds no event, for LastEvent).
var ErrNotFound = errors.New("not found")

// Open opens the log at path of session id for appending. A torn last line (a
// write cut short by a crash) is truncated first; TornBytes reports how many
// bytes were dropped so the caller can record it.
func Open(path, id string, opts OpenLogOptions) (log *EventLog, tornBytes int64, err error) {
	tornBytes, err = TruncateTornTail(path)
	if err != nil {
		return nil, 0, err
	}
	last, _, err := LastEvent(path)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, 0, err
	}
	f, err := safefile.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("open event log: %w", err)
	}
	l := &EventLog{f: f, path: path, sessionID: id, nextSeq: last.Seq + 1, redact: opts.Redact, now: opts.Now, unsynced: tornBytes > 0}
	if l.now == nil {
		l.now = time.Now
	}
	return l, tornBytes, nil
}

// NextSeq is the seq the next appended event will get.
func (l *EventLog) NextSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nextSeq
}

// Append assigns seq, timestamp and session id to each event, redacts it and
// writes the batch in one write. The events are updated in place. A batch
// that could not be written whole (a full disk) returns its error: the log
// never keeps a partial line, the events whose whole lines reached the file
// stay (a follower may have shown them), and the next batch's seq numbers
// follow theirs.
func (l *EventLog) Append(events ...*Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil { // closed: a late update after the owner closed its log
		return fmt.Errorf("append to %s: %w", l.path, os.ErrClosed)
	}
	l.buf.Reset()
	now := FormatTime(l.now())
	seq := l.nextSeq
	for _, e := range events {
		e.Seq = seq
		e.Timestamp = now
		e.SessionID = l.sessionID
		if l.redact != nil {
			l.redact(e)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", e.Type, err)
		}
		l.buf.Write(b)
		l.buf.WriteByte('\n')
		seq++
	}
	l.unsynced = true // a failed append is cut back off the file: that too is to flush
	kept, err := safefile.AppendWhole(l.f, l.path, l.buf.Bytes())
	l.nextSeq += int64(kept)
	return err
}

// logFile is the log's open file (tests put a failing disk behind it).
type logFile interface {
	safefile.AppendFile
	Sync() error
	Close() error
}

// Sync flushes appended events to stable storage.
func (l *EventLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked()
}

// syncLocked is Sync for a caller that holds l.mu.
func (l *EventLog) syncLocked() error {
	if !l.unsynced || l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, safefile.BareCause(err))
	}
	l.unsynced = false
	return nil
}

// AppendSync appends and then syncs: for turn boundaries, markers and state changes.
func (l *EventLog) AppendSync(events ...*Event) error {
	if err := l.Append(events...); err != nil {
		return err
	}
	return l.Sync()
}

// Close syncs and closes the log.
func (l *EventLog) Close() error {
	if l == nil {
		return nil
	}
	// Under the lock: a late Append (an agent update after the owner closed
	// its log) then finds it closed, never a file closing under it.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	serr := l.syncLocked()
	cerr := l.f.Close()
	l.f = nil
	if serr != nil {
		return serr // it names the path; a close after a failed sync adds nothing
	}
	return cerr
}

// TruncateTornTail cuts an unterminated last line off the log at path and
// returns how many bytes it removed. A missing file is not an error.
func TruncateTornTail(path string) (int64, error) {
	rep, err := ScanBackward(path, func(int64, []byte) bool { return false })
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil || rep.TornBytes == 0 {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if err := os.Truncate(path, st.Size()-rep.TornBytes); err != nil {
		return 0, fmt.Errorf("truncate torn line of %s: %w", path, err)
	}
	return rep.TornBytes, nil
}
