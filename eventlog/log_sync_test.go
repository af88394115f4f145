package eventlog

import (
	"os"
	"path/filepath"
	"testing"
)

// A Sync with nothing written since the last one makes no system call: the
// log's file is closed behind its back, so an fsync would fail.
func TestEventLog_SyncFlushesOnlyWhatWasWrittenSinceTheLastSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	syncAfterClose := func(l *EventLog) error {
		t.Helper()
		l.f.Close()
		err := l.Sync()
		l.f = nil
		return err
	}

	l, _, err := Open(path, "s1", OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := syncAfterClose(l); err != nil {
		t.Fatalf("a new log's Sync flushed (nothing was written): %v", err)
	}

	l, _, _ = Open(path, "s1", OpenLogOptions{})
	if err := l.AppendSync(&Event{Type: EventState}); err != nil {
		t.Fatal(err)
	}
	if err := syncAfterClose(l); err != nil {
		t.Fatalf("a Sync after AppendSync flushed again: %v", err)
	}

	l, _, _ = Open(path, "s1", OpenLogOptions{})
	if err := l.Append(&Event{Type: EventState}); err != nil {
		t.Fatal(err)
	}
	if err := syncAfterClose(l); err == nil {
		t.Fatal("a Sync after an Append did not flush it")
	}

	// A torn tail cut off on open is flushed by the first Sync.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":3,"type":"sta`)
	f.Close()
	l, torn, _ := Open(path, "s1", OpenLogOptions{})
	if torn == 0 {
		t.Fatal("no torn tail cut")
	}
	if err := syncAfterClose(l); err == nil {
		t.Fatal("the cut of a torn tail was not flushed")
	}
}
