package history

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/testlog"
)

// benchChunk is a 200-byte streamed chunk with no secret and no trigger word.
var benchChunk = func() string {
	s := "I'll update the parser in state/log.go so that a torn last line is skipped and reported, then run the whole test suite again to confirm nothing else changed. After that I will update the README and the changelog."
	return s[:200]
}()

func BenchmarkRedact_ChunkWithoutSecrets(b *testing.B) {
	if len(benchChunk) != 200 || Redact(benchChunk) != benchChunk {
		b.Fatal("bad chunk")
	}
	b.SetBytes(int64(len(benchChunk)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(benchChunk)
	}
}

func BenchmarkRedact_ChunkWithTriggerWordButNoSecret(b *testing.B) {
	chunk := strings.Replace(benchChunk, "parser", "tokenizer", 1)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(chunk)
	}
}

// benchEvents is a log of n events: turns of user message, three assistant
// chunks, a tool call and result, and the turn boundaries.
func benchEvents(n int) []eventlog.Event {
	events := make([]eventlog.Event, 0, n)
	for seq := int64(1); len(events) < n; seq++ {
		line := testlog.Conversation(seq)
		line.Seq, line.Timestamp = seq, testlog.Stamp
		b, _ := json.Marshal(line)
		var e eventlog.Event
		if err := json.Unmarshal(b, &e); err != nil {
			panic(err)
		}
		events = append(events, e)
	}
	return events
}

func BenchmarkBuildResumeContext(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		events := benchEvents(n)
		b.Run(fmt.Sprint(n, "_events"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				BuildResumeContext(events, "continue", "ses-bench", 0)
			}
		})
	}
}

func BenchmarkAssemble_1000Events(b *testing.B) {
	events := benchEvents(1_000)
	b.ReportAllocs()
	for b.Loop() {
		Assemble(events)
	}
}
