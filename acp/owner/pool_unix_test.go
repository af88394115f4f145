//go:build unix

package owner

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// The pool is a few warm owners among many sessions: joining it reads the
// records of live owners only. Here every other record is a FIFO, which
// blocks whoever opens it, so a pool that read them would never answer.
func TestWarmOwners_ReadOnlyTheRecordsOfLiveOwners(t *testing.T) {
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	for _, id := range []string{"self", "warm", "warm-closing", "live-cold"} {
		s := &state.Session{ID: id, State: state.StateWaitingForInput, LastActivityAt: time.Now()}
		if id != "live-cold" {
			s.WarmUntil = &until
		}
		if err := h.CreateSession(s); err != nil {
			t.Fatal(err)
		}
		lock, err := h.AcquireOwner(id)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
	}
	if err := h.Enqueue("warm-closing", &state.Input{Kind: state.InputClose}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		id := fmt.Sprintf("idle-%d", i)
		if alive, _ := h.OwnerAlive(id); alive { // its lock file exists, as after any owner
			t.Fatal(id)
		}
		if err := syscall.Mkfifo(h.RecordPath(id), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan []Warm, 1)
	go func() { got <- warmOwners(h, "self") }()
	select {
	case w := <-got:
		if len(w) != 1 || w[0].ID != "warm" || !w[0].Idle {
			t.Fatalf("warm owners = %+v, want only warm, idle", w)
		}
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test can end, then fail.
		for i := range 20 {
			if f, err := os.OpenFile(h.RecordPath(fmt.Sprintf("idle-%d", i)), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		t.Fatal("warmOwners read the records of sessions that have no live owner")
	}
}
