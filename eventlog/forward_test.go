package eventlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestLines_HandsEveryLineWholeWhateverTheReadsAndTheLineLengths(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the reader's first buffer
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"one line", "a\n", []string{"a\n"}},
		{"unterminated last line comes last, without a newline", "a\nb", []string{"a\n", "b"}},
		{"blank lines are lines", "\n\na\n", []string{"\n", "\n", "a\n"}},
		{"a line longer than the buffer", "a\n" + long + "\nb\n", []string{"a\n", long + "\n", "b\n"}},
		{"a torn line longer than the buffer", "a\n" + long, []string{"a\n", long}},
	}
	readers := map[string]func(string) io.Reader{
		"whole":         func(s string) io.Reader { return strings.NewReader(s) },
		"a byte a read": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half reads":    func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, c := range cases {
		for rname, r := range readers {
			if rname == "a byte a read" && len(c.in) > 1<<16 {
				continue // 200 KiB one byte at a time proves nothing more
			}
			t.Run(c.name+"/"+rname, func(t *testing.T) {
				var got []string
				if err := Lines(r(c.in), func(line []byte) bool { got = append(got, string(line)); return true }); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) || len(got) != len(c.want) {
					t.Fatalf("got %d lines %.80q, want %d %.80q", len(got), got, len(c.want), c.want)
				}
			})
		}
	}
}

func TestLines_StopsWhenToldAndAnAppendToALineLeavesTheNextIntact(t *testing.T) {
	var got []string
	err := Lines(strings.NewReader("a\nb\nc\n"), func(line []byte) bool {
		_ = append(line, '!') // must not overwrite the "b" that follows in the buffer
		got = append(got, string(line))
		return len(got) < 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a\n", "b\n"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestScanLinesAndReadLogBlocks_LeaveATornTailOutAndReportItsLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte("one\ntwo\nthr"), 0o600); err != nil {
		t.Fatal(err)
	}
	var lines []string
	torn, err := ScanLines(path, func(l []byte) bool { lines = append(lines, string(l)); return true })
	if err != nil || torn != 3 || fmt.Sprint(lines) != fmt.Sprint([]string{"one\n", "two\n"}) {
		t.Fatalf("ScanLines: %q, torn %d, %v", lines, torn, err)
	}
	var blocks bytes.Buffer
	_, torn, err = ReadLogBlocks(path, nil, func(b []byte) bool { blocks.Write(b); return true })
	if err != nil || torn != 3 || blocks.String() != "one\ntwo\n" {
		t.Fatalf("ReadLogBlocks: %q, torn %d, %v", blocks.String(), torn, err)
	}
	if _, err := ScanLines(filepath.Join(t.TempDir(), "none"), func([]byte) bool { return true }); err == nil {
		t.Fatal("a missing log read without an error")
	}
}

func TestFollow_SeesLinesAppendedInPiecesAndReturnsTheOffsetPastTheLastOneRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	first := `{"seq":1,"type":"turn_started","turn_id":"t1"}` + "\n"
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	second := `{"seq":2,"type":"turn_ended","turn_id":"t1","stop_reason":"end_turn"}` + "\n"
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for _, piece := range []string{"not json\n", second[:10], second[10:]} { // a garbage line, then a line in two writes
			time.Sleep(50 * time.Millisecond)
			f.WriteString(piece)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var seqs []int64
	off, err := Follow(ctx, path, 0, func(e Event) bool {
		seqs = append(seqs, e.Seq)
		return e.Type != EventTurnEnded
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("followed seqs %v, want [1 2]", seqs)
	}
	if want := int64(len(first) + len("not json\n") + len(second)); off != want {
		t.Fatalf("Follow returned offset %d, want %d (past the turn_ended line)", off, want)
	}
	// From that offset nothing is left, and the stop check ends the wait.
	off2, err := Follow(ctx, path, off, func(Event) bool { t.Fatal("an event past the end"); return false }, func() bool { return true })
	if err != nil || off2 != off {
		t.Fatalf("a second Follow from the end: offset %d, %v", off2, err)
	}
}
