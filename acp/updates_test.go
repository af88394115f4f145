package acp

import "testing"

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
