package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/kandev/kandev/internal/safefile"
)

// A lease's default and longest time to live, in seconds (a day).
const (
	DefaultTTLSeconds = 900
	MaxTTLSeconds     = 86400
)

// Lease is a holder's time-bounded claim to drive a session (see docs/resume.md).
type Lease struct {
	SessionID       string    `json:"session_id"`
	AttachedTo      string    `json:"attached_to"`
	AttachedAt      time.Time `json:"attached_at"`
	AttachExpiresAt time.Time `json:"attach_expires_at"`
}

// Live reports whether the lease is held at now. A lease that ends more
// than MaxTTLSeconds after now (a forged file, a clock that was wrong when
// it was taken) binds nobody: no kandev takes one that long (Beyond).
func (l *Lease) Live(now time.Time) bool {
	return l != nil && l.AttachedTo != "" && now.Before(l.AttachExpiresAt) && l.Beyond(now) == ""
}

// Beyond says why the lease cannot be honoured at now, "" when it can:
// it ends further ahead than the longest lease kandev grants.
func (l *Lease) Beyond(now time.Time) string {
	if l == nil || !l.AttachExpiresAt.After(now.Add(MaxTTLSeconds*time.Second)) {
		return ""
	}
	return fmt.Sprintf("its lease for %s ends at %s, beyond the %d-hour maximum of a lease: it is ignored (kandev detach %s --holder %s removes it)",
		l.AttachedTo, l.AttachExpiresAt.UTC().Format(time.RFC3339), MaxTTLSeconds/3600, l.SessionID, l.AttachedTo)
}

// Lease operations, which decide what a conflict tells the user to do.
const (
	LeaseOpPrompt = "prompt" // CheckLease: prompt takes --force
	LeaseOpResume = "resume" // Attach: resume has no --force
	LeaseOpDetach = "detach" // Detach: only the holder can release
	// LeaseOpChange: rewind, clear and compact, which take --force as prompt does.
	LeaseOpChange = "change"
)

// leaseHeldError names the holder and the expiry, and what the command that
// met it (Op) can do about it.
type leaseHeldError struct {
	Lease Lease
	Op    string
}

func (e *leaseHeldError) Error() string {
	l := e.Lease
	until := l.AttachExpiresAt.Format(time.RFC3339)
	msg := fmt.Sprintf("session %s is attached to %s until %s", l.SessionID, l.AttachedTo, until)
	release := fmt.Sprintf("kandev detach %s --holder %s", l.SessionID, l.AttachedTo)
	switch e.Op {
	case LeaseOpPrompt:
		return msg + "; wait for it to expire, release it with " + release + ", or pass --force to send anyway"
	case LeaseOpChange:
		return msg + "; wait for it to expire, release it with " + release + ", or pass --force to change it anyway"
	case LeaseOpDetach:
		return msg + ", not to you; release it with " + release
	}
	return msg + "; wait for it to expire, or release it with " + release + " and run resume again"
}

// Unwrap makes errors.Is(err, ErrLeaseHeld) true.
func (e *leaseHeldError) Unwrap() error { return ErrLeaseHeld }

// DefaultHolder is $KANDEV_HOLDER, else cli:<user>@<host>, so a person's own
// shell invocations never conflict with each other.
func DefaultHolder() string {
	if h := os.Getenv("KANDEV_HOLDER"); h != "" {
		return h
	}
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "cli:" + name + "@" + host
}

// ValidateTTL checks a --ttl value before any conversion: 0 or negative
// means the default; above MaxTTLSeconds is a usage error.
func ValidateTTL(seconds int64, def int) (time.Duration, error) {
	if seconds > MaxTTLSeconds {
		return 0, fmt.Errorf("--ttl %d is over the limit of %d seconds", seconds, MaxTTLSeconds)
	}
	if seconds <= 0 {
		seconds = int64(def)
		if seconds <= 0 || seconds > MaxTTLSeconds {
			seconds = DefaultTTLSeconds
		}
	}
	return time.Duration(seconds) * time.Second, nil
}

// ReadLease returns the session's lease, nil when there is none.
func (h *Home) ReadLease(id string) (*Lease, error) {
	b, err := safefile.ReadRecordFile(safefile.AtCWD, "", h.LeasePath(id), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, nil // a corrupt lease binds nobody
	}
	return &l, nil
}

// Attach takes or renews the lease for holder under the record lock, so two
// racing processes cannot both win. Another holder's live lease is a
// *leaseHeldError; an expired one is taken over.
func (h *Home) Attach(id, holder string, ttl time.Duration, now time.Time) (*Lease, error) {
	unlock, err := h.LockRecord(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := h.ReadLease(id)
	if err != nil {
		return nil, err
	}
	if cur.Live(now) && cur.AttachedTo != holder {
		return nil, &leaseHeldError{Lease: *cur, Op: LeaseOpResume}
	}
	l := &Lease{SessionID: id, AttachedTo: holder, AttachedAt: now.UTC(), AttachExpiresAt: now.Add(ttl).UTC()}
	if cur.Live(now) {
		l.AttachedAt = cur.AttachedAt // a renewal keeps when the holder attached
	}
	b, _ := json.Marshal(l)
	return l, safefile.WriteFileAtomic(h.LeasePath(id), append(b, '\n'))
}

// Detach releases holder's lease; releasing a lease one does not hold is an error.
func (h *Home) Detach(id, holder string, now time.Time) error {
	unlock, err := h.LockRecord(id)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := h.ReadLease(id)
	if err != nil {
		return err
	}
	if cur.Beyond(now) != "" {
		return os.Remove(h.LeasePath(id)) // binds nobody: whoever asks may clear it
	}
	if !cur.Live(now) {
		return nil
	}
	if cur.AttachedTo != holder {
		return &leaseHeldError{Lease: *cur, Op: LeaseOpDetach}
	}
	return os.Remove(h.LeasePath(id))
}

// CheckLease returns a *leaseHeldError if another holder's lease is live
// (for a prompt).
func (h *Home) CheckLease(id, holder string, now time.Time) error {
	return h.CheckLeaseFor(LeaseOpPrompt, id, holder, now)
}

// CheckLeaseFor returns a *leaseHeldError for op if another holder's lease
// is live: every command that drives the session's conversation checks it.
func (h *Home) CheckLeaseFor(op, id, holder string, now time.Time) error {
	cur, err := h.ReadLease(id)
	if err != nil {
		return err
	}
	if cur.Live(now) && cur.AttachedTo != holder {
		return &leaseHeldError{Lease: *cur, Op: op}
	}
	return nil
}
