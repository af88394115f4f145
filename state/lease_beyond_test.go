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
