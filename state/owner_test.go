package state

import (
	"os"
	"slices"
	"testing"
)

func TestLiveOwners_AreTheSessionsWhoseOwnerLockIsHeldAndNoRecordIsRead(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"live", "released", "probed"} {
		if err := h.CreateSession(&Session{ID: id, State: StateWaitingForInput}); err != nil {
			t.Fatal(err)
		}
	}
	live, err := h.AcquireOwner("live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	released, err := h.AcquireOwner("released")
	if err != nil {
		t.Fatal(err)
	}
	released.Release()
	if alive, _ := h.OwnerAlive("probed"); alive { // a probe leaves a lock file behind
		t.Fatal("probed is alive")
	}
	// A held lock whose record is gone is still a live owner: the record is
	// not what the listing reads.
	gone, err := h.AcquireOwner("no-record")
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Release()
	if err := os.WriteFile(h.LockPath("..bad"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := h.LiveOwners()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"live", "no-record"}; !slices.Equal(got, want) {
		t.Fatalf("LiveOwners = %v, want %v", got, want)
	}
}
