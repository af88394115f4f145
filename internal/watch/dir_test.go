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
	go func() { _, _, closed := d.Next(); got <- []string{map[bool]string{true: "closed"}[closed]} }()
	d.Close()
	if names := <-got; names[0] != "closed" {
		t.Fatalf("Next after Close: %v", names)
	}
}
