package state

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/safefile"
)

// smallDisk mounts a tmpfs of size bytes in a temp dir, or skips visibly
// where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs to fill (%v: %s); needs root or CAP_SYS_ADMIN", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a filler file until the disk at dir is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

func assertWholeLines(t *testing.T, path string, wantEvents int) {
	t.Helper()
	lh, err := eventlog.InspectLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if lh.TornBytes != 0 || len(lh.CorruptLines) != 0 || len(lh.SeqFaults) != 0 || lh.SeqGaps != 0 || lh.Events != wantEvents {
		t.Fatalf("log after a failed append: %+v, want %d whole events", lh, wantEvents)
	}
}

func TestAppend_FullDiskCutsThePartialBatchBackAndReturnsTheCause(t *testing.T) {
	disk := smallDisk(t, "64k")
	h, err := OpenHome(disk)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AppendSync(&eventlog.Event{Type: eventlog.EventState, State: StateRunning}); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, disk)
	big := strings.Repeat("x", 32<<10) // larger than what is left: the write comes back short or fails
	err = l.Append(&eventlog.Event{Type: eventlog.EventAgentMessage, Content: big})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), h.LogPath("s1")) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("append on a full disk: %v", err)
	}
	assertWholeLines(t, h.LogPath("s1"), 1)
	os.Remove(filler)
	if err := l.AppendSync(&eventlog.Event{Type: eventlog.EventAgentMessage, Content: "after"}); err != nil {
		t.Fatal(err)
	}
	assertWholeLines(t, h.LogPath("s1"), 2) // seq 2 follows seq 1: the failed batch used no seq
}

func TestWriteFileAtomic_FullDiskReturnsTheCauseAndKeepsTheOldRecord(t *testing.T) {
	disk := smallDisk(t, "64k")
	h, err := OpenHome(disk)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CreateSession(&Session{ID: "s1", State: StateWaitingForInput}); err != nil {
		t.Fatal(err)
	}
	fill(t, disk)
	_, err = h.UpdateSession("s1", func(s *Session) error { s.Title = strings.Repeat("t", 16<<10); return nil })
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), h.RecordPath("s1")) {
		t.Fatalf("record write on a full disk: %v", err)
	}
	if s, err := h.LoadSession("s1"); err != nil || s.Title != "" {
		t.Fatalf("old record: %+v %v", s, err)
	}
}

// failingDisk is a file whose writes stop after limit bytes with an I/O
// error, the way a failing disk ends a write midway.
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

func TestAppendWhole_ShortWriteIsCutBackSoTheNextAppendStartsAFreshLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := safefile.AppendWhole(f, path, []byte("{\"seq\":1}\n")); err != nil {
		t.Fatal(err)
	}
	kept, err := safefile.AppendWhole(failingDisk{f, 5}, path, []byte("{\"seq\":2,\"content\":\"long\"}\n"))
	if !errors.Is(err, syscall.EIO) || !strings.HasPrefix(err.Error(), "append to "+path+": ") || kept != 0 {
		t.Fatalf("short write: %v, %d lines kept", err, kept)
	}
	if _, err := safefile.AppendWhole(f, path, []byte("{\"seq\":2}\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"seq\":1}\n{\"seq\":2}\n" {
		t.Fatalf("log after a short write and a retry: %q", b)
	}
}

func TestInspectLog_FindsSeqThatRepeatsGoesBackOrSkips(t *testing.T) {
	tests := []struct {
		name          string
		log           string
		faults, gaps  int
		corrupt, torn bool
	}{
		{"healthy", "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n", 0, 0, false, false},
		{"seq repeats", "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":2}\n{\"seq\":3}\n", 1, 0, false, false},
		{"seq goes back", "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n{\"seq\":1}\n", 1, 0, false, false},
		{"seq skips", "{\"seq\":1}\n{\"seq\":4}\n", 0, 1, false, false},
		{"partial line glued to the next", "{\"seq\":1}\n{\"seq\":2,\"ty{\"seq\":3}\n{\"seq\":4}\n", 0, 1, true, false},
		{"torn tail", "{\"seq\":1}\n{\"seq\":2,\"ty", 0, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(path, []byte(tt.log), filePerm)
			lh, err := eventlog.InspectLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(lh.SeqFaults) != tt.faults || lh.SeqGaps != tt.gaps || (len(lh.CorruptLines) > 0) != tt.corrupt || (lh.TornBytes > 0) != tt.torn {
				t.Fatalf("%+v", lh)
			}
		})
	}
}

func TestScanBackward_LinesLongerThanABlockAreWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var want [][]byte
	var all bytes.Buffer
	for i, n := range []int{10, backChunk - 1, backChunk, backChunk + 1, 3*backChunk + 7, 1, 5 * backChunk} {
		line := bytes.Repeat([]byte{byte('a' + i)}, n)
		want = append(want, line)
		all.Write(line)
		all.WriteByte('\n')
	}
	all.WriteString(strings.Repeat("t", 2*backChunk)) // a torn tail longer than a block
	os.WriteFile(path, all.Bytes(), filePerm)
	var got [][]byte
	rep, err := eventlog.ScanBackward(path, func(_ int64, line []byte) bool { got = append(got, bytes.Clone(line)); return true })
	if err != nil || rep.TornBytes != 2*backChunk {
		t.Fatal(err, rep)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[len(got)-1-i], want[i]) {
			t.Fatalf("line %d: %d bytes, want %d", i, len(got[len(got)-1-i]), len(want[i]))
		}
	}
}
