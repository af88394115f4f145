package commands

import (
	"io"
	"strings"
	"testing"

	"github.com/kandev/kandev/internal/testlog"
	"github.com/kandev/kandev/state"
)

// benchHome writes n sessions the way kandev leaves them after a few turns
// (60% waiting for input, 10% interrupted mid-turn, 30% completed), each
// with a short log and its lock files.
func benchHome(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if _, err := state.OpenHome(dir); err != nil {
		b.Fatal(err)
	}
	testlog.WriteHome(b, dir, n, testlog.Home{LogEvents: 8, Locks: true, State: func(i int) string {
		switch i % 10 {
		case 0:
			return state.StateRunning
		case 1, 2, 3:
			return state.StateCompleted
		}
		return state.StateWaitingForInput
	}})
	return dir
}

func benchList(b *testing.B, n int, args ...string) {
	home := benchHome(b, n)
	args = append([]string{"--home", home}, args...)
	b.ReportAllocs()
	for b.Loop() {
		if code := Run(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

func BenchmarkListResumable_1000Sessions(b *testing.B)  { benchList(b, 1_000, "list", "--resumable") }
func BenchmarkListResumable_10000Sessions(b *testing.B) { benchList(b, 10_000, "list", "--resumable") }
func BenchmarkListJSON_10000Sessions(b *testing.B)      { benchList(b, 10_000, "--json", "list") }
func BenchmarkStatusLatest_10000Sessions(b *testing.B) {
	benchList(b, 10_000, "status", "--latest", "--all-workspaces")
}
