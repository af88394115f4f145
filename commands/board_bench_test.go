package commands

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/board"
)

// benchBoardOpen opens the board over a home of n sessions: read every
// session with its badge, arrange, draw the first screen at 200x50. The
// figure is its ratio to BenchmarkList_1000Sessions (at most 2x).
func benchBoardOpen(b *testing.B, n int) {
	home := benchHome(b, n)
	b.ReportAllocs()
	for b.Loop() {
		env := &Env{G: &Globals{Home: home}, Stdin: strings.NewReader(""), Out: &Output{Out: io.Discard, Err: io.Discard},
			Ctx: context.Background(), Now: time.Now}
		h, err := env.Home()
		if err != nil {
			b.Fatal(err)
		}
		src, err := boardSource(env, h)
		if err != nil {
			b.Fatal(err)
		}
		undo := readingEverySession()
		screen, err := board.FirstScreen(src, 200, 50, board.Filter{}, false, time.Now)
		undo()
		if err != nil || !strings.Contains(screen, "Needs resume") {
			b.Fatalf("no board: %v", err)
		}
	}
}

func BenchmarkBoardOpen_1000Sessions(b *testing.B)  { benchBoardOpen(b, 1_000) }
func BenchmarkBoardOpen_10000Sessions(b *testing.B) { benchBoardOpen(b, 10_000) }
func BenchmarkList_1000Sessions(b *testing.B)       { benchList(b, 1_000, "list") }
func BenchmarkBoardOnce_1000Sessions(b *testing.B)  { benchList(b, 1_000, "board", "--once") }
