package state

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/testlog"
)

func BenchmarkAppend(b *testing.B) {
	h, _ := OpenHome(b.TempDir())
	l, _, _ := h.OpenLog("bench", eventlog.OpenLogOptions{})
	defer l.Close()
	e := &eventlog.Event{Type: eventlog.EventAgentMessage, Role: "assistant", Content: "a streamed chunk of text of typical size"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBatch64(b *testing.B) {
	h, _ := OpenHome(b.TempDir())
	l, _, _ := h.OpenLog("bench", eventlog.OpenLogOptions{})
	defer l.Close()
	batch := make([]*eventlog.Event, 64)
	for i := range batch {
		batch[i] = &eventlog.Event{Type: eventlog.EventAgentMessage, Role: "assistant", Content: "a streamed chunk of text of typical size"}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += 64 {
		if err := l.Append(batch...); err != nil {
			b.Fatal(err)
		}
	}
}

func benchReadLast20(b *testing.B, n int) {
	path := b.TempDir() + "/bench.jsonl"
	testlog.WriteLog(b, path, "bench", n, testlog.Chunks)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, _, err := eventlog.ReadLast(path, 20, nil)
		if err != nil || len(evs) != 20 || evs[19].Seq != int64(n) {
			b.Fatalf("%d events, err %v", len(evs), err)
		}
	}
}

func BenchmarkReadLast20_1kEvents(b *testing.B) { benchReadLast20(b, 1_000) }
func BenchmarkReadLast20_1MEvents(b *testing.B) { benchReadLast20(b, 1_000_000) }
