package state

import "time"

// EnqueueOnce queues prompt in unless a prompt with the same Key was ever
// queued for session id: then *in becomes that earlier input and existing
// is true. The look and the append happen under the record lock, and the
// entry is on disk before EnqueueOnce returns, so of any number of senders
// racing with one key (in one process or many, before or after a crash)
// exactly one queues it; every other gets the same input to follow.
// The inbox is append-only, so a key is never forgotten.
func (h *Home) EnqueueOnce(id string, in *Input) (existing bool, err error) {
	if in.Key == "" {
		return false, h.Enqueue(id, in)
	}
	if in.ID == "" {
		in.ID = NewInputID()
	}
	if in.QueuedAt.IsZero() {
		in.QueuedAt = time.Now().UTC()
	}
	unlock, err := h.LockRecord(id)
	if err != nil {
		return false, err
	}
	defer unlock()
	ins, err := h.ReadInbox(id, 0)
	if err != nil {
		return false, err
	}
	for _, q := range ins {
		if q.Kind == InputPrompt && q.Key == in.Key {
			*in = q
			return true, nil
		}
	}
	return false, h.enqueueLocked(id, in)
}
