package state

import (
	"testing"

	"github.com/kandev/kandev/internal/testlog"
)

func benchListSessions(b *testing.B, n int) {
	h, err := OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	testlog.WriteRecords(b, h.Dir, n)
	b.ReportAllocs()
	for b.Loop() {
		ss, err := h.ListSessions()
		if err != nil || len(ss) != n {
			b.Fatalf("%d sessions, %v", len(ss), err)
		}
	}
}

func BenchmarkListSessions_1000(b *testing.B)  { benchListSessions(b, 1_000) }
func BenchmarkListSessions_10000(b *testing.B) { benchListSessions(b, 10_000) }

// BenchmarkOwnerAlive is the lock probe list makes for every live session.
func BenchmarkOwnerAlive(b *testing.B) {
	h, err := OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if alive, err := h.OwnerAlive("bench"); alive || err != nil {
			b.Fatal(alive, err)
		}
	}
}
