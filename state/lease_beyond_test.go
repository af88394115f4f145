package state

import (
	"testing"
	"time"
)

func TestLease_OneEndingBeyondTheMaximumBindsNobody(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		ends time.Time
		live bool
	}{
		{"the default 15 minutes", now.Add(15 * time.Minute), true},
		{"exactly the 24 h maximum", now.Add(MaxTTLSeconds * time.Second), true},
		{"a second beyond it", now.Add(MaxTTLSeconds*time.Second + time.Second), false},
		{"year 9999", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"expired", now.Add(-time.Second), false},
	}
	for _, c := range cases {
		l := &Lease{SessionID: "S", AttachedTo: "ci:x", AttachExpiresAt: c.ends}
		if got := l.Live(now); got != c.live {
			t.Errorf("%s: Live = %v, want %v (%s)", c.name, got, c.live, l.Beyond(now))
		}
	}
}

func TestAttach_SameHolderRenewsOtherHolderConflictsExpiredIsTakenOver(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	h.CreateSession(&Session{ID: "s", State: StateWaitingForInput})
	now := time.Now()
	if _, err := h.Attach("s", "a", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Attach("s", "a", time.Minute, now.Add(time.Second)); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	_, err := h.Attach("s", "b", time.Minute, now.Add(2*time.Second))
	var held *leaseHeldError
	if !isErr(err, ErrLeaseHeld) || !asLease(err, &held) || held.Lease.AttachedTo != "a" {
		t.Fatalf("other holder: %v", err)
	}
	if _, err := h.Attach("s", "b", time.Minute, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("expired lease not taken over: %v", err)
	}
	if err := h.Detach("s", "a", now.Add(2*time.Minute)); !isErr(err, ErrLeaseHeld) {
		t.Fatalf("detaching someone else's lease: %v", err)
	}
	if err := h.Detach("s", "b", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if l, _ := h.ReadLease("s"); l != nil {
		t.Fatalf("lease left after detach: %+v", l)
	}
}
