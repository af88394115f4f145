package acp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// writeBenchLog writes n events in the SPEC format: turns of a user message,
// three streamed chunks, a tool call and its result, and the boundaries.
func writeBenchLog(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	result := strings.Repeat("package state // ...\n", 10)
	for seq := int64(1); seq <= int64(n); seq++ {
		turn := fmt.Sprint("t", seq/8+1)
		var e state.Event
		switch seq % 8 {
		case 0:
			e = state.Event{Type: state.EventTurnStarted, Source: state.SourceUser}
		case 1:
			e = state.Event{Type: state.EventUserMessage, Role: "user", Content: fmt.Sprint("Please fix failing test ", seq/8, " in state/log_test.go.")}
		case 2, 3, 4:
			e = state.Event{Type: state.EventAgentMessage, Role: "assistant", Content: "Looking at the log reader now; the torn line handling needs a fix. "}
		case 5:
			e = state.Event{Type: state.EventToolCall, ToolName: "Read state/log.go", ToolCallID: fmt.Sprint("call-", seq), ToolStatus: "pending"}
		case 6:
			e = state.Event{Type: state.EventToolResult, ToolName: "Read state/log.go", ToolCallID: fmt.Sprint("call-", seq-1), ToolStatus: "completed", Content: result}
		case 7:
			e = state.Event{Type: state.EventTurnEnded, StopReason: "end_turn"}
		}
		e.Seq, e.TurnID, e.SessionID, e.Timestamp = seq, turn, "bench", "2026-11-30T05:22:09.123456789Z"
		if err := enc.Encode(&e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkResumeContextFromLog is what the first prompt after a fresh agent
// session costs kandev: read the history from the log and build the bounded
// block. Its cost must not grow with the log (SPEC 3.3, issue 7: 1M <= 2x 1k).
func BenchmarkResumeContextFromLog(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1k_events", 1_000}, {"1M_events", 1_000_000}} {
		path := filepath.Join(b.TempDir(), "bench.jsonl")
		writeBenchLog(b, path, c.n)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evs, partial := historyForContext(path, history.DefaultMaxReplayBytes)
				if ctx := history.BuildResumeContextWindow(evs, "continue", "bench", history.DefaultMaxReplayBytes, partial); len(ctx) == 0 {
					b.Fatal("empty resume context")
				}
			}
		})
	}
}

// BenchmarkUpdateToEvent is the per-update cost of a streamed turn before
// the log write: one agent_message_chunk notification to one event.
func BenchmarkUpdateToEvent(b *testing.B) {
	params := []byte(`{"sessionId":"demo-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk 4242\n"}}}`)
	tools := toolNames{}
	b.ReportAllocs()
	for b.Loop() {
		if e := updateToEvent(params, tools); e.Content != "chunk 4242\n" {
			b.Fatal(e.Content)
		}
	}
}
