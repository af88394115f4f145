package state

import (
	"bytes"
)

// LogHealth is what one full read of an event log found wrong. Readers
// already live with each of these (they skip what does not parse and keep
// the file order); doctor reports them.
type LogHealth struct {
	ReadReport
	Events int
	// SeqFaults are the events whose seq repeats or goes back: the log had
	// two writers, or lines were pasted into it.
	SeqFaults []SeqFault
	// SeqGaps counts the places where seq jumps forward by more than one
	// (events lost, for example inside a corrupt line).
	SeqGaps int
}

// SeqFault is one event whose seq is not above the one before it.
type SeqFault struct {
	Offset int64 `json:"offset"` // byte offset of its line
	Seq    int64 `json:"seq"`
	After  int64 `json:"after"` // the highest seq seen before it
}

// InspectLog reads the whole log at path and reports torn and corrupt lines
// and seq numbers that repeat, go back or skip. A missing log is ErrNotFound.
func InspectLog(path string) (LogHealth, error) {
	var h LogHealth
	var off, last int64
	torn, err := ScanLines(path, func(line []byte) bool {
		start := off
		off += int64(len(line))
		s, ok := lineSeq(line)
		if !ok {
			if len(bytes.TrimSpace(line)) > 0 {
				h.CorruptLines = append(h.CorruptLines, start)
				h.CorruptAfter = append(h.CorruptAfter, last)
			}
			return true
		}
		h.Events++
		switch {
		case s <= last:
			h.SeqFaults = append(h.SeqFaults, SeqFault{Offset: start, Seq: s, After: last})
		case s > last+1:
			h.SeqGaps++
			last = s
		default:
			last = s
		}
		return true
	})
	h.TornBytes = torn
	return h, err
}

// lineSeq is the seq of a log line that is a readable event, decided as
// every reader decides it (DecodeEvent): "seq": 11.5, -1 or 2^63-1 is not.
func lineSeq(line []byte) (int64, bool) {
	e, ok := DecodeEvent(line)
	return e.Seq, ok
}
