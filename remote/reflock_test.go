package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/config"
)

// A claim whose remote (a path) answers too late is given up by this
// machine, but the git that updates the remote's refs is not killed in
// the middle: a SIGKILL while it held a ref's lock left the lock file in
// the remote, and every later claim of the session, on any machine, was
// refused as "being claimed by another machine at this moment" for ever
// (the two-machine crash matrix, under load: a renewal given a third of a
// 2 s claim). The remote's git here holds the locks for 3 s, past the 1 s
// timeout.
func TestTurns_AClaimThatTimesOutLeavesNoLockInThePathRemote(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SKIP: the remote's slow hook is a shell script")
	}
	id := "20261201-100000-reflock1"
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 2, TimeoutSeconds: 1}}
	a, b, bare := twoMachinesAt(t, id, cfg)
	once := filepath.Join(t.TempDir(), "slowed")
	// reference-transaction runs with every ref of the update locked.
	hook := "#!/bin/sh\ncat >/dev/null\nif [ \"$1\" = prepared ] && mkdir '" + once + "' 2>/dev/null; then sleep 3; fi\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ClaimTurns(ctx, a, cfg, id, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("A's claim against a remote that answers in 3 s: %v (%T), want a timeout", err, err)
	}
	lock := filepath.Join(bare, "refs", "kandev", "owners", id+".lock")
	// B waits as long as it must: what is under test is A's timeout.
	cfgB := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 2, TimeoutSeconds: 30}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		tb, err := ClaimTurns(ctx, b, cfgB, id, nil)
		if err == nil {
			tb.Release(ctx)
			return
		}
		if time.Now().After(deadline) {
			_, lerr := os.Stat(lock)
			t.Fatalf("B cannot claim the session long after A's claim timed out (A's claim lasts 2 s): %v (the remote's lock file left: %v)", err, lerr == nil)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A lock file left in a path remote on the session's claim (a git killed
// while it updated the ref) is named, with what to do, when a claim or a
// push is refused for it: before, the claim said "being claimed by another
// machine at this moment; try again" however often it was tried, and the
// push "the remote ref changed meanwhile".
func TestTurns_ALockFileLeftInAPathRemoteIsNamed(t *testing.T) {
	id := "20261201-100000-reflock2"
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 5}}
	a, _, bare := twoMachinesAt(t, id, cfg)
	appendTurn(t, a, id, 11, 2)
	lock := filepath.Join(bare, "refs", "kandev", "owners", id+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err := ClaimTurns(ctx, a, cfg, id, nil)
	if err == nil || !strings.Contains(err.Error(), lock) || errors.Is(err, ErrClaimHeld) {
		t.Fatalf("claim with a lock file left in the remote: %v, want one naming %s (not a claim held)", err, lock)
	}
	_, err = Push(ctx, Env{Home: a, Config: cfg, Opt: Options{Dir: a.Dir}}, id)
	if err == nil || !strings.Contains(err.Error(), lock) {
		t.Fatalf("push with a lock file left in the remote: %v, want one naming %s", err, lock)
	}
	os.Remove(lock)
	if _, err := Push(ctx, Env{Home: a, Config: cfg, Opt: Options{Dir: a.Dir}}, id); err != nil {
		t.Fatalf("push once the lock file is gone: %v", err)
	}
}

// A machine whose sync file still names a claim of its own that a later
// claim replaced (the later command's answer was lost: it timed out as the
// remote took it) is fenced by its own machine; once a pull finds nothing
// newer on the remote, the next push goes on. Before, every push was
// refused as "taken over by machine B" and every pull said "ahead" (the
// two-machine crash matrix, seed 20261207 run 3, never converged).
func TestPull_AMachineFencedByItsOwnLaterClaimPushesAfterAPull(t *testing.T) {
	id := "20261201-100000-selffenc"
	cfg := &config.Config{Sync: config.SyncConfig{ClaimTTLSeconds: 5}}
	_, b, _ := twoMachinesAt(t, id, cfg)
	ctx := context.Background()
	first, err := ClaimTurns(ctx, b, cfg, id, nil)
	if err != nil || first == nil {
		t.Fatal(first, err)
	}
	held, err := os.ReadFile(SyncPath(b, id))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	later, err := ClaimTurns(ctx, b, cfg, id, nil)
	if err != nil || later == nil {
		t.Fatal(later, err)
	}
	close(later.stop) // that command is gone
	<-later.done
	if err := os.WriteFile(SyncPath(b, id), held, 0o600); err != nil { // its answer was lost
		t.Fatal(err)
	}
	appendTurn(t, b, id, 11, 3)
	env := Env{Home: b, Config: cfg, Opt: Options{Dir: b.Dir}}
	if _, err := Push(ctx, env, id); !errors.Is(err, ErrFenced) {
		t.Fatalf("push of a machine fenced by its own later claim: %v, want fenced", err)
	}
	if _, err := Pull(ctx, env, id, false, false); err != nil {
		t.Fatalf("pull: %v", err)
	}
	if _, err := Push(ctx, env, id); err != nil {
		t.Fatalf("push after a pull that found nothing newer: %v", err)
	}
}
