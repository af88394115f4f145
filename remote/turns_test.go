package remote

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// Two homes against one bare repository by path, in one process: the claim
// excludes the second while the first holds it (renewing it meanwhile),
// and once released the second takes it with the first one's new events.
func TestTurns_OneMachineAtATimeAndTheNextTakesTheNewEvents(t *testing.T) {
	id := "20261201-100000-turns001"
	// 3 s, renewed every second: a 1 s TTL (renewed every 333 ms) was
	// fenced on a loaded machine by a late renewal.
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 3}}
	a, b := twoMachines(t, id, cfg)
	ctx := context.Background()
	ta, err := ClaimTurns(ctx, a, cfg, id, func() { t.Error("A was fenced while renewing") })
	if err != nil || ta == nil {
		t.Fatal(ta, err)
	}
	appendTurn(t, a, id, 11, 5)
	time.Sleep(3500 * time.Millisecond) // past the TTL: only renewals keep it
	if _, err := ClaimTurns(ctx, b, cfg, id, nil); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("B claimed a session A holds: %v", err)
	}
	if err := ta.Release(ctx); err != nil {
		t.Fatal(err)
	}
	tb, err := ClaimTurns(ctx, b, cfg, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(ctx)
	la, _ := os.ReadFile(a.LogPath(id))
	lb, _ := os.ReadFile(b.LogPath(id))
	if string(la) != string(lb) {
		t.Fatalf("B's claim did not bring A's new events: %d vs %d bytes", len(lb), len(la))
	}
}

// twoMachines is two homes with session id, pushed from the first to a
// bare repository by path and pulled into the second.
func twoMachines(t *testing.T, id string, cfg *config.Config) (a, b *state.Home) {
	t.Helper()
	a, b, _ = twoMachinesAt(t, id, cfg)
	return a, b
}

// twoMachinesAt is twoMachines that also returns the bare repository.
func twoMachinesAt(t *testing.T, id string, cfg *config.Config) (a, b *state.Home, bare string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	bare = filepath.Join(t.TempDir(), "p.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.Unsetenv("KANDEV_MACHINE")
	a = homeWithSession(t, id, 10)
	ctx := context.Background()
	if _, err := Push(ctx, Env{Home: a, Config: cfg, Opt: Options{Remote: bare, Dir: a.Dir}}, id); err != nil {
		t.Fatal(err)
	}
	b, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, Env{Home: b, Config: cfg, Opt: Options{Remote: bare, Dir: b.Dir}}, id, false, false); err != nil {
		t.Fatal(err)
	}
	return a, b, bare
}

// A machine whose renewals stalled (its process frozen) past the claim's
// TTL learns on waking that another took the claim, and its error names
// that machine even when the renewal's own time ran out meanwhile.
func TestTurns_AFencedMachineIsToldWhichMachineTookItsClaim(t *testing.T) {
	id := "20261201-100000-turns002"
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 1}}
	a, b := twoMachines(t, id, cfg)
	ctx := context.Background()
	ta, err := ClaimTurns(ctx, a, cfg, id, nil)
	if err != nil || ta == nil {
		t.Fatal(ta, err)
	}
	close(ta.stop) // A renews no more, as if frozen
	<-ta.done
	time.Sleep(1500 * time.Millisecond)
	tb, err := ClaimTurns(ctx, b, cfg, id, nil)
	if err != nil {
		t.Fatalf("B could not take A's expired claim: %v", err)
	}
	defer tb.Release(ctx)
	spent, cancel := context.WithCancel(ctx)
	cancel()
	var fe *FencedError
	if err := ta.l.fenced(spent); !errors.As(err, &fe) {
		t.Fatalf("A's fencing error: %v", err)
	}
	if want, _ := MachineID(b); fe.Machine == "" || fe.Machine != want {
		t.Fatalf("A was told machine %q took its claim, want %q: %v", fe.Machine, want, fe)
	}
}

// A session deleted here after it synced (kandev prune) is pulled whole
// again, not from where it last agreed.
func TestPull_ASessionDeletedSinceItSyncedComesBackWhole(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	bare := filepath.Join(t.TempDir(), "p.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	id := "20261201-100000-pruned01"
	h := homeWithSession(t, id, 10)
	e := Env{Home: h, Opt: Options{Remote: bare, Dir: h.Dir, Machine: "A"}}
	ctx := context.Background()
	if _, err := Push(ctx, e, id); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(h.LogPath(id))
	if err := h.DeleteSessionFiles(id); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, e, id, false, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(h.LogPath(id)); string(got) != string(want) {
		t.Fatalf("pulled %d bytes, want the whole %d", len(got), len(want))
	}
}

// A machine whose own claim_ttl_seconds is shorter than the holder's
// honours the holder's claim to its own expires_at: B (TTL 1 s) is still
// refused two seconds later while A (TTL 30 s) runs its turn.
func TestTurns_AShorterTTLHereDoesNotShortenAnotherMachinesClaim(t *testing.T) {
	id := "20261201-100000-turns003"
	long := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 30}}
	short := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 1}}
	a, b := twoMachines(t, id, long)
	ctx := context.Background()
	ta, err := ClaimTurns(ctx, a, long, id, nil)
	if err != nil || ta == nil {
		t.Fatal(ta, err)
	}
	defer ta.Release(ctx)
	if _, err := ClaimTurns(ctx, b, short, id, nil); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("B claimed a session A holds: %v", err)
	}
	time.Sleep(2 * time.Second) // B's own TTL is long past, A's claim is not
	if tb, err := ClaimTurns(ctx, b, short, id, nil); !errors.Is(err, ErrClaimHeld) {
		tb.Release(ctx)
		t.Fatalf("B took A's live claim once its own, shorter, TTL had passed: %v", err)
	}
}

// A renewal that reached the remote but whose answer was lost (its time ran
// out on a loaded machine) leaves the remote holding this process's own
// renewed claim: the next renewal and the release adopt it instead of
// calling this machine fenced by itself ("taken over by machine A" on A).
func TestTurns_ARenewalWhoseAnswerWasLostIsNotATakeover(t *testing.T) {
	id := "20261201-100000-turns003"
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 30}}
	a, b := twoMachines(t, id, cfg)
	ctx := context.Background()
	ta, err := ClaimTurns(ctx, a, cfg, id, func() { t.Error("A was fenced by its own renewal") })
	if err != nil || ta == nil {
		t.Fatal(ta, err)
	}
	close(ta.stop) // the test renews by hand
	<-ta.done
	l := ta.l
	held, heldHash := l.held()
	c := *held
	c.ExpiresAt = l.opt.now().Add(l.opt.TTL)
	cu, err := l.claimUpdate(view{owner: plumbing.NewHash(heldHash)}, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.w.push(ctx, []refUpdate{cu.up}); err != nil {
		t.Fatal(err)
	}
	// Its answer lost: the sync file still names the claim before it.
	if err := ta.renewOnce(ctx); err != nil {
		t.Fatalf("the renewal after a lost answer: %v", err)
	}
	if !ta.Holding() {
		t.Fatal("A no longer holds its claim")
	}
	if err := l.w.push(ctx, []refUpdate{mustRenewal(t, l)}); err != nil {
		t.Fatal(err)
	}
	ta.stop, ta.done = make(chan struct{}), make(chan struct{})
	close(ta.done)
	if err := ta.Release(ctx); err != nil {
		t.Fatalf("the release after a lost answer: %v", err)
	}
	tb, err := ClaimTurns(ctx, b, cfg, id, nil)
	if err != nil {
		t.Fatalf("B after A released: %v", err)
	}
	tb.Release(ctx)
}

// mustRenewal is a renewal of l's held claim, not yet pushed.
func mustRenewal(t *testing.T, l *link) refUpdate {
	t.Helper()
	held, heldHash := l.held()
	c := *held
	c.ExpiresAt = l.opt.now().Add(l.opt.TTL + time.Second)
	cu, err := l.claimUpdate(view{owner: plumbing.NewHash(heldHash)}, c)
	if err != nil {
		t.Fatal(err)
	}
	return cu.up
}
