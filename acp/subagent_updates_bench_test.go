package acp

import (
	"sync/atomic"
	"testing"
)

// The recorder's cost of one streamed chunk, the parent's and a child's:
// a child's chunk should cost about what the parent's does.
func benchChunks(b *testing.B, session string) {
	var parent atomic.Pointer[string]
	p := "P"
	parent.Store(&p)
	cs := newChildStreams(&parent, map[string]bool{"C": false})
	params := []byte(`{"sessionId":"` + session + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk 12345\n"}}}`)
	tools := toolNames{}
	b.ReportAllocs()
	for b.Loop() {
		cs.events(params, tools)
	}
}

func BenchmarkChunk_Parent(b *testing.B) { benchChunks(b, "P") }
func BenchmarkChunk_Child(b *testing.B)  { benchChunks(b, "C") }
