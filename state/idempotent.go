package state

import (
	"fmt"
	"path/filepath"
	"time"
)

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
		in.ID = newInputID()
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

// startKeysLockPath is the lock that orders kandev start --key across processes.
func (h *Home) startKeysLockPath() string { return filepath.Join(h.Dir, "start-keys.lock") }

// ReserveStartKey finds the session started with key (kandev start --key),
// or, when there is none, calls create, which must create the session with
// StartKey set, all under one home-wide lock: of any number of starts with
// one key, exactly one creates a session; every other gets it.
func (h *Home) ReserveStartKey(key string, create func() (*Session, error)) (s *Session, existing bool, err error) {
	fl := newLock(h.startKeysLockPath())
	if err := fl.Lock(); err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", fl.Path(), lockFileError(fl.Path(), err))
	}
	defer func() { _ = fl.Unlock() }()
	all, err := h.ListSessions()
	if err != nil {
		return nil, false, err
	}
	for _, s := range all {
		if s.StartKey == key {
			return s, true, nil
		}
	}
	s, err = create()
	return s, false, err
}
