package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

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
	return scanLogAt(path, func(_ int64, e Event) bool { return fn(e) })
}

// scanLogAt is ScanLog that also passes the byte offset of each event's line.
func scanLogAt(path string, fn func(off int64, e Event) bool) (ReadReport, error) {
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
		return fn(start, e)
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
	f, err := openLog(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	err = Lines(f, func(line []byte) bool {
		if line[len(line)-1] != '\n' {
			tornBytes = int64(len(line))
			return false
		}
		return fn(line)
	})
	return tornBytes, err
}

// ReadAll returns every readable event of the log at path.
func ReadAll(path string) ([]Event, ReadReport, error) {
	var out []Event
	rep, err := ScanLog(path, func(e Event) bool { out = append(out, e); return true })
	return out, rep, err
}
