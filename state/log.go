package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
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
	f         *os.File
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

// OpenLog opens the log of session id for appending. A torn last line (a
// write cut short by a crash) is truncated first; TornBytes reports how many
// bytes were dropped so the caller can record it.
func (h *Home) OpenLog(id string, opts OpenLogOptions) (log *EventLog, tornBytes int64, err error) {
	if err := ValidateID(id); err != nil {
		return nil, 0, err
	}
	path := h.LogPath(id)
	tornBytes, err = TruncateTornTail(path)
	if err != nil {
		return nil, 0, err
	}
	last, _, err := LastEvent(path)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, 0, err
	}
	f, err := openSessionFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
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
// that could not be written whole (a full disk) is cut back off the file and
// its error returned: the log never keeps a partial line, and the seq
// numbers of the failed batch are used by the next one.
func (l *EventLog) Append(events ...*Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	if err := appendWhole(l.f, l.path, l.buf.Bytes()); err != nil {
		return err
	}
	l.nextSeq = seq
	return nil
}

// Sync flushes appended events to stable storage.
func (l *EventLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.unsynced {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, bareCause(err))
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
	if l == nil || l.f == nil {
		return nil
	}
	serr := l.Sync()
	cerr := l.f.Close()
	l.f = nil
	if serr != nil {
		return serr // it names the path; a close after a failed sync adds nothing
	}
	return cerr
}

// ReadReport says what a reader skipped.
type ReadReport struct {
	Path         string  // the log that was read, for the message
	TornBytes    int64   // bytes of an unterminated last line that were skipped
	CorruptLines []int64 // byte offsets of lines in the middle that did not parse
	// CorruptAfter is, for each of CorruptLines, the seq of the nearest
	// readable event before it in the file (0: none, or a backward read
	// stopped before reaching one): what a warning names it by.
	CorruptAfter []int64
	// UnknownEvents counts events of a type this kandev does not know: they
	// are read (with Raw set), not skipped.
	UnknownEvents int
}

// Problems returns a one-line description of what was skipped, or "".
// Corrupt lines are named by where they are (the seq before the first, its
// byte offset) and point at kandev doctor, which lists them all.
func (r ReadReport) Problems() string {
	corrupt := ""
	if n := len(r.CorruptLines); n > 0 {
		where := fmt.Sprintf("at byte %d", r.CorruptLines[0])
		if len(r.CorruptAfter) > 0 && r.CorruptAfter[0] > 0 {
			where = fmt.Sprintf("after seq %d, %s", r.CorruptAfter[0], where)
		}
		first := ""
		if n > 1 {
			first = "the first "
		}
		corrupt = fmt.Sprintf("%d corrupt line(s)%s that are not readable events (%s%s); kandev doctor lists them", n, r.of(), first, where)
	}
	switch {
	case r.TornBytes > 0 && corrupt != "":
		return fmt.Sprintf("skipped a torn last line%s (%d bytes; kandev repair truncates it) and %s", r.of(), r.TornBytes, strings.Replace(corrupt, r.of(), "", 1))
	case r.TornBytes > 0:
		return fmt.Sprintf("skipped a torn last line%s (%d bytes); run kandev repair to truncate it", r.of(), r.TornBytes)
	case corrupt != "":
		return "skipped " + corrupt
	}
	return ""
}

// of names the log in a message: " of PATH", or "" when it is not known.
func (r ReadReport) of() string {
	if r.Path == "" {
		return ""
	}
	return " of " + r.Path
}

// CorruptTracker collects the corrupt lines a backward reader passes, for
// its ReadReport: Line for each line that is not a readable event, Event
// for each one that is, then AddTo.
type CorruptTracker struct {
	offs, after []int64 // newest first
	pending     int     // lines still waiting for the event before them
}

// Line notes a line at byte offset off that is not a readable event (blank
// lines are not corrupt).
func (c *CorruptTracker) Line(off int64, line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	c.offs, c.after = append(c.offs, off), append(c.after, 0)
	c.pending++
}

// Event notes a readable event: the one before the lines noted since.
func (c *CorruptTracker) Event(seq int64) {
	for i := len(c.after) - c.pending; i < len(c.after); i++ {
		c.after[i] = seq
	}
	c.pending = 0
}

// AddTo records the lines in rep, in file order.
func (c *CorruptTracker) AddTo(rep *ReadReport) {
	for i := len(c.offs) - 1; i >= 0; i-- {
		rep.CorruptLines = append(rep.CorruptLines, c.offs[i])
		rep.CorruptAfter = append(rep.CorruptAfter, c.after[i])
	}
}

// ScanLog calls fn for every event of the log at path in seq order, skipping
// and reporting a torn last line and lines that do not parse, and counting
// events of unknown types. A missing log is ErrNotFound. fn returning false
// stops the scan.
func ScanLog(path string, fn func(Event) bool) (ReadReport, error) {
	rep := ReadReport{Path: path}
	var off, last int64
	torn, err := ScanLines(path, func(line []byte) bool {
		start := off
		off += int64(len(line))
		e, ok := DecodeEvent(line)
		if !ok {
			if len(bytes.TrimSpace(line)) > 0 {
				rep.CorruptLines = append(rep.CorruptLines, start)
				rep.CorruptAfter = append(rep.CorruptAfter, last)
			}
			return true
		}
		last = e.Seq
		if e.Raw != nil {
			rep.UnknownEvents++
		}
		return fn(e)
	})
	rep.TornBytes = torn
	return rep, err
}

// DecodeEvent parses one log line; ok is false for a line that is not an
// event, and for one whose seq is not a whole number from 1 to MaxSeq (a
// line with seq -1 or 2^63-1 would break the numbering of the events
// appended after it). An event of a type this kandev does not know keeps
// the line in Raw.
func DecodeEvent(line []byte) (e Event, ok bool) {
	if json.Unmarshal(line, &e) != nil || !ValidSeq(e.Seq) {
		return Event{}, false
	}
	if !KnownEventType(e.Type) {
		e.Raw = bytes.Clone(bytes.TrimSpace(line))
	}
	return e, true
}

// ScanLines calls fn for each complete line of the file at path, newline
// included, and returns the length of an unterminated last line: for
// readers that pass over most lines without decoding them.
func ScanLines(path string, fn func(line []byte) bool) (tornBytes int64, err error) {
	return scanLinesWith(path, nil, fn)
}

// scanLinesWith is scanLines with its reader taken from pool (nil: a new
// one), for callers that scan thousands of logs.
func scanLinesWith(path string, pool *sync.Pool, fn func(line []byte) bool) (tornBytes int64, err error) {
	f, err := openSessionFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("event log %s: %w", path, ErrNotFound)
		}
		return 0, err
	}
	defer f.Close()
	var r *bufio.Reader
	if pool != nil {
		r = pool.Get().(*bufio.Reader)
		r.Reset(f)
		defer func() { r.Reset(nil); pool.Put(r) }()
	} else {
		r = bufio.NewReaderSize(f, 256<<10)
	}
	for {
		line, err := ReadLine(r)
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return int64(len(line)), nil
			}
			if !fn(line) {
				return 0, nil
			}
		}
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// ReadLine reads one whole line of any length from r, with its newline when
// it has one. The slice is valid until the next read.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		full := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.ReadSlice('\n')
			full = append(full, line...)
		}
		return full, err
	}
	return line, err
}

// ReadAll returns every readable event of the log at path.
func ReadAll(path string) ([]Event, ReadReport, error) {
	var out []Event
	rep, err := ScanLog(path, func(e Event) bool { out = append(out, e); return true })
	return out, rep, err
}

// A backward read starts with a small block (most readers stop within the
// last few events: a turn's end, the last page) and doubles it up to
// backChunk as it goes on reading back.
const (
	backFirstChunk = 4 << 10
	backChunk      = 64 << 10
)

// ScanBackward calls fn for each complete line of the file at path, newest
// first, reading blocks from the end: its cost depends on how far fn reads,
// not on the file's length, and is linear in the length of each line read.
// An unterminated last line is skipped and reported. fn returning false
// stops the scan; line is only valid during the call.
func ScanBackward(path string, fn func(line []byte) bool) (ReadReport, error) {
	return ScanBackwardAt(path, func(_ int64, line []byte) bool { return fn(line) })
}

// ScanBackwardAt is ScanBackward that also passes the byte offset of each line.
func ScanBackwardAt(path string, fn func(off int64, line []byte) bool) (ReadReport, error) {
	rep := ReadReport{Path: path}
	f, err := openSessionFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return rep, fmt.Errorf("event log %s: %w", path, ErrNotFound)
		}
		return rep, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return rep, err
	}
	r := &backReader{f: f, buf: make([]byte, min(backFirstChunk, st.Size())), start: st.Size()}
	nl, err := r.newlineBefore(st.Size())
	if err != nil {
		return rep, err
	}
	rep.TornBytes = st.Size() - (nl + 1)
	for end := nl; end >= 0; { // end is the offset of a line's newline
		prev, err := r.newlineBefore(end)
		if err != nil {
			return rep, err
		}
		line, err := r.bytes(prev+1, end)
		if err != nil {
			return rep, err
		}
		if len(bytes.TrimSpace(line)) > 0 && !fn(prev+1, line) {
			return rep, nil
		}
		end = prev
	}
	return rep, nil
}

// backReader reads a file from the end in blocks. Every byte is searched
// once and a line longer than a block is read once more in one piece, so a
// line costs time linear in its length however long it is.
type backReader struct {
	f     *os.File
	buf   []byte // the file's bytes [start, start+n)
	start int64
	n     int
}

// newlineBefore is the offset of the last '\n' before pos, or -1.
func (r *backReader) newlineBefore(pos int64) (int64, error) {
	for {
		if pos > r.start {
			if i := bytes.LastIndexByte(r.buf[:min(pos-r.start, int64(r.n))], '\n'); i >= 0 {
				return r.start + int64(i), nil
			}
		}
		if r.start == 0 {
			return -1, nil
		}
		pos = min(pos, r.start) // everything from here up was searched
		// A block was read before: read on in larger ones.
		if r.n > 0 && len(r.buf) < backChunk {
			r.buf = make([]byte, min(2*len(r.buf), backChunk))
		}
		from := max(0, pos-int64(len(r.buf)))
		if _, err := r.f.ReadAt(r.buf[:pos-from], from); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		r.start, r.n = from, int(pos-from)
	}
}

// bytes returns the file's bytes [from, to): from the block when it holds
// them, else read in one piece.
func (r *backReader) bytes(from, to int64) ([]byte, error) {
	if from >= r.start && to <= r.start+int64(r.n) {
		return r.buf[from-r.start : to-r.start], nil
	}
	out := make([]byte, to-from)
	if _, err := r.f.ReadAt(out, from); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadLast returns up to n events from the end of the log that keep accepts
// (all when keep is nil), oldest first, without scanning the whole file.
func ReadLast(path string, n int, keep func(*Event) bool) ([]Event, ReadReport, error) {
	var out []Event
	var bad CorruptTracker
	rep, err := ScanBackwardAt(path, func(off int64, line []byte) bool {
		var e Event
		if json.Unmarshal(line, &e) != nil || !ValidSeq(e.Seq) {
			bad.Line(off, line)
			return true
		}
		bad.Event(e.Seq)
		if keep == nil || keep(&e) {
			out = append(out, e)
		}
		return len(out) < n
	})
	bad.AddTo(&rep)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rep, err
}

// LastEvent is the newest readable event of the log; ErrNotFound if the log
// is missing or has none.
func LastEvent(path string) (Event, ReadReport, error) {
	evs, rep, err := ReadLast(path, 1, nil)
	if err != nil {
		return Event{}, rep, err
	}
	if len(evs) == 0 {
		return Event{}, rep, ErrNotFound
	}
	return evs[0], rep, nil
}

// TruncateTornTail cuts an unterminated last line off the log at path and
// returns how many bytes it removed. A missing file is not an error.
func TruncateTornTail(path string) (int64, error) {
	rep, err := ScanBackward(path, func([]byte) bool { return false })
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

// TurnClosed reports whether the log holds a turn_ended for turnID, reading
// back from the end only as far as that turn's start. A turn that ended
// with stop_reason shutdown is not closed: its owner was terminated and the
// turn still awaits its continuation.
func TurnClosed(path, turnID string) bool {
	// A turn whose turn_started never reached the log did not begin: there
	// is nothing of it to resume.
	closed := true
	_, _ = ScanBackward(path, func(line []byte) bool {
		// Three fields of turn_started and turn_ended lines decide: the others
		// (a whole turn of streamed chunks) are passed over without decoding.
		if !bytes.Contains(line, []byte(`"type":"turn_`)) || !gjson.ValidBytes(line) {
			return true
		}
		f := gjson.GetManyBytes(line, "turn_id", "type", "stop_reason")
		if f[0].Type != gjson.String || f[1].Type != gjson.String {
			return true
		}
		if f[0].Str != turnID {
			// An earlier turn's start, seen before any event of turnID: the
			// newest turn in the log is an earlier one.
			return f[1].Str != EventTurnStarted
		}
		switch f[1].Str {
		case EventTurnEnded: // one ended by shutdown still awaits its continuation
			closed = f[2].Str != StopShutdown
			return false
		case EventTurnStarted:
			closed = false
			return false
		}
		// Another event of the turn (its state after turn_ended, a chunk):
		// read on back to its end or its start.
		closed = false
		return true
	})
	return closed
}
