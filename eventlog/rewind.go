package eventlog

// Rewind is an epoch fence: from epoch Epoch on, the conversation is what
// the log held up to seq ToSeq (0: nothing, a clear).
type Rewind struct {
	Epoch int   `json:"epoch"`
	ToSeq int64 `json:"to_seq"`
}

// Event is the rewind event that fences the log.
func (r Rewind) Event() *Event {
	to := r.ToSeq
	return &Event{Type: EventRewind, Epoch: r.Epoch, ToSeq: &to}
}
