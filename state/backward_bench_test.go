package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// BenchmarkScanBackward_OneLongLine reads, newest first and decoded (the way
// transcript, recap and the resume context do), a log whose middle line is
// one agent message of 20 or 40 MB. Reading is linear in a line's length
// when the 40 MB run costs about twice the 20 MB one.
func BenchmarkScanBackward_OneLongLine(b *testing.B) {
	for _, mb := range []int{20, 40} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "long.jsonl")
			writeLongLineLog(b, path, mb<<20)
			st, _ := os.Stat(path)
			b.SetBytes(st.Size())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := 0
				if _, err := eventlog.ScanEventsBackward(path, func(eventlog.Event, []byte) bool { n++; return true }); err != nil || n != 201 {
					b.Fatal(err, n)
				}
			}
		})
	}
}

// writeLongLineLog writes 100 short events, one of size bytes, 100 short ones.
func writeLongLineLog(tb testing.TB, path string, size int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i := 1; i <= 201; i++ {
		e := eventlog.Event{Seq: int64(i), Type: eventlog.EventAgentMessage, SessionID: "bench", Role: "assistant", Content: "a short chunk"}
		if i == 101 {
			e.Content = strings.Repeat("long line ", size/10)
		}
		if err := enc.Encode(e); err != nil {
			tb.Fatal(err)
		}
	}
}
