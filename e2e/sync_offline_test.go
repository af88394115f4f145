//go:build unix

package e2e_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSync_OfflineIsForItsOwnCommandsTurnNotTheWarmOwnersNext: the git
// daemon is frozen; a prompt --offline runs on this machine's copy and its
// owner lingers. The next prompt, without --offline (queued, --no-follow,
// so that only that owner serves it), reaches that owner, which cannot take
// the claim: the turn does not run. Before, the owner started over for the
// queued input with the first command's --offline and ran it on this
// machine's copy (two-machine crash matrix, seed 20261207 runs 19 and 181,
// where the owner's new round beat the following command to the session).
func TestSync_OfflineIsForItsOwnCommandsTurnNotTheWarmOwnersNext(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "daemon")
	a := r.a
	id := r.shared()
	a.config("[sync]\ntimeout_seconds = 2\n")
	if err := r.daemon.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.daemon.Process.Signal(syscall.SIGCONT) })
	res, _ := runWithin(a, 60*time.Second, "prompt", "--offline", "--linger", "10s", id, "remember plum")
	if res.code != 0 || !strings.Contains(res.stdout, "plum") {
		t.Fatalf("prompt --offline against a frozen remote: %s", res)
	}
	if !a.ownerAlive(id) {
		t.Fatalf("the owner of the --offline prompt did not linger")
	}
	res, _ = runWithin(a, 60*time.Second, "prompt", "--no-follow", id, "remember fig")
	if res.code != 0 {
		t.Fatalf("prompt --no-follow to the warm owner: %s", res)
	}
	a.waitOwnerGone(id, 60*time.Second) // it cannot take the claim: it ends
	for _, text := range userTexts(a.events(id)) {
		if strings.Contains(text, "fig") {
			t.Fatalf("a prompt without --offline ran on this machine's copy, its remote silent: %q", text)
		}
	}
}

// TestSync_ARefusedPromptDoesNotRunLater: the git daemon is frozen; a
// prompt (its owner detached: --linger) is refused (exit 1, no turn runs
// here) and the person sends it again with --offline, as the refusal says. The turn runs once: the
// refused prompt was taken back from the inbox. Before, it stayed queued,
// an owner was started for it (which made the --offline prompt, with
// --linger, "owned by another process"), and the --offline owner served it
// too: the same turn twice (two-machine crash matrix, seed 20261207).
func TestSync_ARefusedPromptDoesNotRunLater(t *testing.T) {
	// Serial: claims are timed (docs/testing.md).
	r := newSyncRig(t, "daemon")
	a := r.a
	id := r.shared()
	a.config("[sync]\ntimeout_seconds = 2\n")
	if err := r.daemon.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.daemon.Process.Signal(syscall.SIGCONT) })
	res, _ := runWithin(a, 60*time.Second, "prompt", "--linger", "5s", id, "remember fig")
	if res.code != 1 || !strings.Contains(res.stderr, "--offline") {
		t.Fatalf("prompt against a frozen remote: %s (want exit 1 naming --offline)", res)
	}
	res, _ = runWithin(a, 60*time.Second, "prompt", "--linger", "5s", "--offline", id, "remember fig")
	if res.code != 0 || !strings.Contains(res.stdout, "fig") {
		t.Fatalf("the same prompt again with --offline: %s", res)
	}
	n := 0
	for _, text := range userTexts(a.events(id)) {
		if strings.Contains(text, "fig") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the prompt sent twice (refused, then --offline) ran %d turns, want 1", n)
	}
}
