package verdict

import (
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// BenchmarkVerdict is the pure part of status and of every list row: the
// verdict and the badge of one record.
func BenchmarkVerdict(b *testing.B) {
	s := &state.Session{ID: "x", State: state.StateRunning, CurrentTurn: "t3", ResumeToken: "tok", AgentLaunched: true}
	obs := Observation{Now: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		if v := Decide(s, obs); !v.NeedsResume || Badge(s, false) != BadgeNeedsResume {
			b.Fatal(v)
		}
	}
}
