package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestChanges_AWriteBeforeWaitIsNotLost(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	c := WatchFiles(path)
	defer c.Close()
	if c.w == nil {
		t.Skip("SKIP: no file-change notifications on this system")
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-c.ch:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("a write to the watched file never arrived as a change")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestChanges_WaitEndsWithTheContext(t *testing.T) {
	c := WatchFiles(filepath.Join(t.TempDir(), "s.jsonl"))
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Wait(ctx, time.Hour); err == nil {
		t.Fatal("Wait with an ended context and nothing written returned nil")
	}
}
