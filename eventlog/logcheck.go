package eventlog

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
	var last int64
	rep, err := scanLogAt(path, func(off int64, e Event) bool {
		h.Events++
		switch s := e.Seq; {
		case s <= last:
			h.SeqFaults = append(h.SeqFaults, SeqFault{Offset: off, Seq: s, After: last})
		case s > last+1:
			h.SeqGaps++
			last = s
		default:
			last = s
		}
		return true
	})
	h.ReadReport = rep
	return h, err
}
