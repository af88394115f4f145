package eventlog

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A late Append (an agent update after the owner closed its log) meets a
// closed log, never a file being closed under it: Close holds the log's
// lock (go test -race reported a DATA RACE on the file field).
func TestClose_ALateAppendBesideCloseIsRefusedNotRaced(t *testing.T) {
	for i := 0; i < 50; i++ {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		l, _, err := Open(path, "s", OpenLogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := l.Append(&Event{Type: EventAgentMessage, Content: "late"}); err != nil && !errors.Is(err, os.ErrClosed) {
				t.Errorf("a late append: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := l.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}()
		wg.Wait()
		if err := l.Append(&Event{Type: EventAgentMessage}); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("an append after close: %v, want os.ErrClosed", err)
		}
	}
}
