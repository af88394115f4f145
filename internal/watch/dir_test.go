package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestDir_NamesWhatChangedAndNothingElse(t *testing.T) {
	dir := t.TempDir()
	d, ok := WatchDir(dir)
	defer d.Close()
	if !ok {
		t.Skip("SKIP: no file-change notifications on this system")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 1)
	go func() { names, _, _ := d.Next(); got <- names }()
	select {
	case names := <-got:
		if !slices.Contains(names, "a.jsonl") {
			t.Fatalf("changed: %v", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write never arrived")
	}
	// What the write still had queued (its CREATE, WRITE, ...) may come
	// first; after Close, Next must say closed and not block.
	go func() {
		for {
			if _, _, closed := d.Next(); closed {
				got <- []string{"closed"}
				return
			}
		}
	}()
	d.Close()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not report the close")
	}
}
