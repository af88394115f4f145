package remote

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Claim is who runs a session's turns, as stored in refs/kandev/owners/<id>.
type Claim struct {
	Machine    string    `json:"machine"`
	PID        int       `json:"pid"`
	Generation int64     `json:"generation"`
	ExpiresAt  time.Time `json:"expires_at"`
	// Released: the holder gave it up; anyone may take it.
	Released bool `json:"released,omitempty"`
}

// Live reports whether the claim still excludes other machines at now.
func (c *Claim) Live(now time.Time) bool {
	return c != nil && !c.Released && now.Before(c.ExpiresAt)
}

// MaxClaimLife is the furthest a claim can reach: an expires_at further
// than this after a machine first saw the claim counts as expiring then.
const MaxClaimLife = 24 * time.Hour

// Bounded is the claim as this machine honours it: to its own expires_at,
// whatever this machine's own claim_ttl_seconds (the holder renews on its
// own TTL), except that an expires_at further than MaxClaimLife after seen
// (when this machine first saw this claim) counts as expiring then, so
// neither a forged claim nor a machine whose clock runs years ahead pins
// a session. A zero seen is now.
func (c *Claim) Bounded(seen, now time.Time) *Claim {
	if c == nil {
		return c
	}
	if seen.IsZero() || seen.After(now) {
		seen = now
	}
	if limit := seen.Add(MaxClaimLife); c.ExpiresAt.After(limit) {
		b := *c
		b.ExpiresAt = limit.UTC()
		return &b
	}
	return c
}

func (c Claim) encode() []byte {
	b, _ := json.Marshal(c) // plain data
	return b
}

func decodeClaim(msg string) (*Claim, error) {
	var c Claim
	if err := json.Unmarshal([]byte(msg), &c); err != nil {
		return nil, fmt.Errorf("unreadable claim: %w", err)
	}
	return &c, nil
}

// ClaimVerdict is what DecideClaim allows.
type ClaimVerdict int

const (
	// ClaimTake: write a new claim of the next generation.
	ClaimTake ClaimVerdict = iota
	// ClaimKeep: this machine holds it already; renew it.
	ClaimKeep
	// ClaimRefused: another machine holds a live claim.
	ClaimRefused
	// ClaimFenced: this machine held it and another took it over since.
	ClaimFenced
)

// ClaimInput is what the claim decision depends on.
type ClaimInput struct {
	Current *Claim // on the remote; nil when the session was never claimed
	// CurrentHash is the remote ref's value; HeldHash what this machine last
	// wrote there ("" when it holds no claim).
	CurrentHash, HeldHash string
	Held                  *Claim // the claim this machine believes it holds
	Machine               string
	Now                   time.Time
}

// DecideClaim says whether this machine may run a turn (see docs/moving.md): a claim
// nobody holds, a released or expired one, may be taken; a live one of
// another machine may not; a machine whose claim was replaced is fenced
// until it has seen the newer state (it gives its claim up, then pulls).
func DecideClaim(in ClaimInput) ClaimVerdict {
	if in.HeldHash != "" {
		if in.CurrentHash == in.HeldHash {
			return ClaimKeep
		}
		// Equal generations of two machines: the count stopped at its
		// maximum (NextClaim), and the other machine wrote last.
		if in.Current != nil && in.Held != nil && (in.Current.Generation > in.Held.Generation ||
			in.Current.Generation == in.Held.Generation && in.Current.Machine != in.Held.Machine) {
			return ClaimFenced
		}
	}
	if in.Current.Live(in.Now) && in.Current.Machine != in.Machine {
		return ClaimRefused
	}
	return ClaimTake
}

// NextClaim is the claim written when taking: one generation after the
// current, which never wraps: a (forged) generation at the int64 maximum
// stays there, and one below 1 starts again at 1.
func NextClaim(cur *Claim, machine string, pid int, now time.Time, ttl time.Duration) Claim {
	gen := int64(1)
	switch {
	case cur == nil || cur.Generation < 1:
	case cur.Generation == math.MaxInt64:
		gen = math.MaxInt64
	default:
		gen = cur.Generation + 1
	}
	return Claim{Machine: machine, PID: pid, Generation: gen, ExpiresAt: now.Add(ttl).UTC()}
}
