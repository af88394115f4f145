package subagents

import (
	"bytes"
	"errors"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
)

// childField is how a child's event line names its child: the lines of a
// log without children are passed over without being decoded.
var childField = []byte(`"child_id":"`)

// FromLog reads the children of the log at path (Summarize); a missing
// log has none.
func FromLog(path string) ([]Child, error) {
	var s summary
	_, err := eventlog.ScanLines(path, func(line []byte) bool {
		if e, ok := decodeChildSummary(line); ok {
			s.add(&e)
		}
		return true
	})
	if errors.Is(err, eventlog.ErrNotFound) {
		err = nil
	}
	return s.children(), err
}

// decodeChild decodes a log line that is a child's event.
func decodeChild(line []byte) (eventlog.Event, bool) {
	if !bytes.Contains(line, childField) {
		return eventlog.Event{}, false
	}
	e, ok := eventlog.DecodeEvent(line)
	return e, ok && e.ChildID != ""
}

// decodeChildSummary is decodeChild for a summary: a chunk of a child's
// message or thought, which a summary only counts, is read for its type,
// child, role and turn alone, so that a child's long stream costs a
// summary what a scan of its lines does.
func decodeChildSummary(line []byte) (eventlog.Event, bool) {
	if !bytes.Contains(line, childField) {
		return eventlog.Event{}, false
	}
	if t := gjson.GetBytes(line, "type").Str; t == eventlog.EventChildMessage || t == eventlog.EventChildThought {
		f := gjson.GetManyBytes(line, "child_id", "role", "turn_id", "seq")
		if f[1].Str != "user" && eventlog.ValidSeq(f[3].Int()) {
			return eventlog.Event{Type: t, ChildID: f[0].Str, Role: f[1].Str, TurnID: f[2].Str}, f[0].Str != ""
		}
	}
	return decodeChild(line)
}
