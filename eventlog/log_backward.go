package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kandev/kandev/internal/safefile"
	"github.com/tidwall/gjson"
)

// A backward read starts with a small block (most readers stop within the
// last few events: a turn's end, the last page) and doubles it up to
// backChunk as it goes on reading back.
const (
	backFirstChunk = 4 << 10
	backChunk      = 64 << 10
)

// ScanBackward calls fn for each complete line of the file at path and its
// byte offset, newest first, reading blocks from the end: its cost depends on
// how far fn reads, not on the file's length, and is linear in the length of
// each line read. An unterminated last line is skipped and reported. fn
// returning false stops the scan; line is only valid during the call.
func ScanBackward(path string, fn func(off int64, line []byte) bool) (ReadReport, error) {
	rep := ReadReport{Path: path}
	f, err := safefile.Open(path, os.O_RDONLY, 0)
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
	rep, err := ScanEventsBackward(path, func(e Event, _ []byte) bool {
		if keep == nil || keep(&e) {
			out = append(out, e)
		}
		return len(out) < n
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rep, err
}

// ScanEventsBackward calls fn with each readable event of the log at path and
// its line as stored, newest first, reading from the end (ScanBackward): the
// cost depends on how far fn reads, not on the log's length. Lines that do
// not parse are skipped and reported. fn returning false stops the scan; line is only
// valid during the call.
func ScanEventsBackward(path string, fn func(e Event, line []byte) bool) (ReadReport, error) {
	var bad CorruptTracker
	rep, err := ScanBackward(path, func(off int64, line []byte) bool {
		var e Event
		if json.Unmarshal(line, &e) != nil || !ValidSeq(e.Seq) {
			bad.Line(off, line)
			return true
		}
		bad.Event(e.Seq)
		return fn(e, line)
	})
	bad.AddTo(&rep)
	return rep, err
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

// TurnClosed reports whether the log holds a turn_ended for turnID, reading
// back from the end only as far as that turn's start. A turn that ended
// with stop_reason shutdown is not closed: its owner was terminated and the
// turn still awaits its continuation.
func TurnClosed(path, turnID string) bool {
	// A turn whose turn_started never reached the log did not begin: there
	// is nothing of it to resume.
	closed := true
	_, _ = ScanBackward(path, func(_ int64, line []byte) bool {
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
