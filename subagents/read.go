package subagents

import (
	"bytes"
	"errors"

	"github.com/kandev/kandev/eventlog"
)

// childField is how a child's event line names its child: the lines of a
// log without children are passed over without being decoded.
var childField = []byte(`"child_id":"`)

// FromLog reads the children of the log at path (Summarize); a missing
// log has none.
func FromLog(path string) ([]Child, error) {
	var evs []eventlog.Event
	_, err := eventlog.ScanLines(path, func(line []byte) bool {
		if e, ok := decodeChild(line); ok {
			evs = append(evs, e)
		}
		return true
	})
	if errors.Is(err, eventlog.ErrNotFound) {
		err = nil
	}
	return Summarize(evs), err
}

// decodeChild decodes a log line that is a child's event.
func decodeChild(line []byte) (eventlog.Event, bool) {
	if !bytes.Contains(line, childField) {
		return eventlog.Event{}, false
	}
	e, ok := eventlog.DecodeEvent(line)
	return e, ok && e.ChildID != ""
}
