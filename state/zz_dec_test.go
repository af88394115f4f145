package state

import (
	"os"
	"testing"
)

func BenchmarkZZDecode(b *testing.B) {
	data, _ := os.ReadFile("/tmp/lb/s10k/sessions/20260105-090000-00000000.json")
	b.ReportAllocs()
	for b.Loop() {
		var s Session
		if err := decodeRecord(data, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZZTurnClosed(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		TurnClosed("/tmp/lb/s10k/sessions/20260105-090000-00000000.jsonl", "t4")
	}
}

func BenchmarkZZOwnerAlive(b *testing.B) {
	h := &Home{Dir: "/tmp/lb/s10k"}
	b.ReportAllocs()
	for b.Loop() {
		h.OwnerAlive("20260105-090000-00000000")
	}
}

func BenchmarkZZPeek(b *testing.B) {
	data, _ := os.ReadFile("/tmp/lb/s10k/sessions/20260105-090000-00000000.json")
	b.ReportAllocs()
	for b.Loop() {
		if !refusable("20260105-090000-00000000", data) {
			b.Fatal("no")
		}
	}
}
