//go:build unix

package eventlog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// failingDisk writes at most limit bytes of a write, then fails with EIO.
type failingDisk struct {
	*os.File
	limit int
}

func (d failingDisk) Write(p []byte) (int, error) {
	if len(p) <= d.limit {
		return d.File.Write(p)
	}
	n, _ := d.File.Write(p[:d.limit])
	return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.EIO}
}

// A follower (a command showing a detached owner's turn) may already have
// shown the whole lines of a batch that the disk cut short: they stay, and
// the next batch follows them.
func TestEventLog_ABatchCutShortKeepsItsWholeLinesAndTheNextSeqFollowsThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l, _, err := Open(path, "s", OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(&Event{Type: EventAgentMessage, Content: "one"}); err != nil {
		t.Fatal(err)
	}
	size := int64(0)
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	real := l.f
	// Room for a bit more than one line of the next batch of three.
	probe, _ := json.Marshal(&Event{Seq: 2, Timestamp: FormatTime(time.Now()), SessionID: "s", Type: EventAgentMessage, Content: "two"})
	l.f = failingDisk{real.(*os.File), len(probe) + 10}
	err = l.Append(&Event{Type: EventAgentMessage, Content: "two"}, &Event{Type: EventAgentMessage, Content: "three"}, &Event{Type: EventAgentMessage, Content: "four"})
	l.f = real
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("append on a failing disk: %v", err)
	}
	if st, _ := os.Stat(path); st.Size() <= size {
		t.Fatal("the whole line that reached the disk was cut off")
	}
	if err := l.Append(&Event{Type: EventAgentMessage, Content: "five"}); err != nil {
		t.Fatal(err)
	}
	evs, rep, err := ReadAll(path)
	if err != nil || rep.Problems() != "" {
		t.Fatalf("log: %v %s", err, rep.Problems())
	}
	var got []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("seq %d at %d: %+v", e.Seq, i, evs)
		}
		got = append(got, e.Content)
	}
	if strings.Join(got, " ") != "one two five" {
		t.Fatalf("log holds %q, want one two five", got)
	}
}
