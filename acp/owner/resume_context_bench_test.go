package owner

import (
	"path/filepath"
	"testing"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/testlog"
)

// BenchmarkResumeContextFromLog is what the first prompt after a fresh agent
// session costs kandev: read the history from the log and build the bounded
// block. Its cost must not grow with the log (docs/resume.md, "The resume context"; issue 7: 1M <= 2x 1k).
func BenchmarkResumeContextFromLog(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1k_events", 1_000}, {"1M_events", 1_000_000}} {
		path := filepath.Join(b.TempDir(), "bench.jsonl")
		testlog.WriteLog(b, path, "bench", c.n, testlog.Conversation)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evs, partial := historyForContext(path, history.DefaultMaxReplayBytes, 0)
				if ctx := history.BuildResumeContextWindow(evs, "continue", "bench", history.DefaultMaxReplayBytes, partial); len(ctx) == 0 {
					b.Fatal("empty resume context")
				}
			}
		})
	}
}
