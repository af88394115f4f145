package history

import (
	"testing"
	"time"
)

// skipUnderRace skips a test of a timing ratio in a -race build, whose
// instrumentation slows the longer run out of proportion (CI saw 17.7x for 8x
// the text, linear without -race); the plain test run still checks it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("SKIP: timing ratios are not meaningful under the race detector; go test without -race checks them")
	}
}

// perRun is how long one run of f takes, timed over batches of runs that
// each last at least 50 ms, so that a coarse clock (Windows' and Wine's tick
// can be 1 to 16 ms) does not read a fast run as zero. It keeps the fastest
// of three batches, the one least disturbed by a shared machine.
func perRun(f func()) time.Duration {
	const enough = 50 * time.Millisecond
	runs := 1
	for {
		start := time.Now()
		for range runs {
			f()
		}
		if elapsed := time.Since(start); elapsed >= enough {
			break
		}
		runs *= 2
	}
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		for range runs {
			f()
		}
		best = min(best, time.Since(start))
	}
	return best / time.Duration(runs)
}

// bestRatio times small and big up to three times and keeps the smallest
// ratio big/small, stopping once it is at most limit: a shared machine only
// ever makes a run slower, so one clean pair shows the cost is linear, while
// a quadratic cost stays over the limit on every try.
func bestRatio(limit float64, small, big func() time.Duration) (ratio float64, s, b time.Duration) {
	ratio = -1
	for range 3 {
		ts, tb := small(), big()
		if r := float64(tb) / float64(ts); ratio < 0 || r < ratio {
			ratio, s, b = r, ts, tb
		}
		if ratio <= limit {
			break
		}
	}
	return ratio, s, b
}
