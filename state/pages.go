package state

import (
	"encoding/json"
	"path/filepath"
)

// DigestPath is where kandev caches the recap digest of session id's log: a
// summary of the log up to a turn, rebuilt from the log when missing or
// stale, never the only copy of anything.
func (h *Home) DigestPath(id string) string { return filepath.Join(h.sessionsDir(), id+".digest") }

// ScanEventsBackward calls fn with each readable event of the log at path and
// its line as stored, newest first, reading from the end (ScanBackward): the
// cost depends on how far fn reads, not on the log's length. Lines that do
// not parse are skipped and reported. fn returning false stops the scan; line is only
// valid during the call.
func ScanEventsBackward(path string, fn func(e Event, line []byte) bool) (ReadReport, error) {
	var bad CorruptTracker
	rep, err := ScanBackwardAt(path, func(off int64, line []byte) bool {
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
