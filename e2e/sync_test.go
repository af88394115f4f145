//go:build unix

package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// TestSync_SessionStoppedBySIGTERMOnOneMachineContinuesOnAnotherExactlyOnce
// is the laptop → workstation story over each transport: A pushes after
// every turn and after a SIGTERM; B pulls and resumes; the cut turn is
// continued once, B's agent knows what A's was told, and A's own resume
// later adds no turn. Neither clone's branches, index or work tree change.
func TestSync_SessionStoppedBySIGTERMOnOneMachineContinuesOnAnotherExactlyOnce(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	for _, transport := range []string{"path", "daemon", "http", "ssh"} {
		t.Run(transport, func(t *testing.T) {
			r := newSyncRig(t, transport)
			a, b := r.a, r.b
			beforeA, beforeB := r.untouched(a), r.untouched(b)
			a.config("[sync]\nauto = true\n")
			id := a.mustStart("remember apple")
			if r.remoteRefs()["refs/kandev/sessions/"+id] == "" {
				t.Fatalf("auto push did not push %s: %v", id, r.remoteRefs())
			}
			sig := a.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, "prompt", id, sleepingTurn)
			if sig.code != 143 {
				t.Fatalf("SIGTERM: exit %d\n%s", sig.code, sig.result)
			}
			if pulled := b.mustRun("pull", id); !strings.Contains(pulled.stdout, "pulled") || !strings.Contains(pulled.stdout, b.cwd) {
				t.Fatalf("pull did not map the worktree to B's clone:\n%s", pulled)
			}
			if s := b.session(id); s.Worktree == nil || s.Worktree.Path != b.cwd {
				t.Fatalf("B's worktree: %+v", s.Worktree)
			}
			b.mustRun("resume", id)
			evsB := b.events(id)
			if n := continuations(evsB); n != 1 {
				t.Fatalf("B continued the cut turn %d times, want 1", n)
			}
			if out := b.mustRun("prompt", id, "recall").stdout; !strings.Contains(out, "apple") {
				t.Fatalf("B's agent does not know what A's was told:\n%s", out)
			}
			turnsB := len(ofType(b.events(id), eventlog.EventTurnStarted))
			a.mustRun("resume", id)
			evsA := a.events(id)
			if n := continuations(evsA); n != 1 {
				t.Fatalf("A's resume continued again: %d continuations", n)
			}
			if n := len(ofType(evsA, eventlog.EventTurnStarted)); n != turnsB {
				t.Fatalf("A's resume ran turns: %d, B had %d", n, turnsB)
			}
			if !strings.Contains(agentText(evsA, lastTurn(evsA)), "apple") {
				t.Fatalf("A did not take B's turns: last turn %s", lastTurn(evsA))
			}
			assertNoSeqGap(t, evsA)
			if st := a.status(id); st.Status.Badge != verdict.BadgeIdle {
				t.Fatalf("A's status after taking B's turns: %+v", st.Status)
			}
			for _, dir := range []string{a.home, b.home} {
				if f := holdsToken(dir); f != "" {
					t.Fatalf("the remote URL's token was written to %s", f)
				}
			}
			if out := r.gitOut(r.bare, "log", "-p", "--format=%B", "refs/kandev/sessions/"+id); strings.Contains(out, urlToken) {
				t.Fatal("the remote URL's token was pushed")
			}
			if after := r.untouched(a); after != beforeA {
				t.Fatalf("A's clone changed:\n%s\nwas\n%s", after, beforeA)
			}
			if after := r.untouched(b); after != beforeB {
				t.Fatalf("B's clone changed:\n%s\nwas\n%s", after, beforeB)
			}
		})
	}
}

// TestSync_BothMachinesAppendWhileApartIsRefusedAndForkKeepsBoth: A's
// owner is SIGKILLed mid-turn holding a short claim; B cannot run the
// session until the claim expires, then takes it over; A is fenced (its
// push refused), its pull refused as diverged with nothing changed, and a
// fork plus pull --replace keeps both copies.
func TestSync_BothMachinesAppendWhileApartIsRefusedAndForkKeepsBoth(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	// 6 s: B's first prompt must come while A's claim still holds, even on
	// a loaded machine (2 s ran out before it there).
	r.config("[sync]\nclaim_ttl_seconds = 6\n")
	id := r.shared()
	killed := a.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGKILL}, "prompt", id, sleepingTurn)
	if killed.code != -1 && killed.code != 137 {
		t.Logf("killed owner exit %d", killed.code)
	}
	held := b.run("prompt", id, "remember pear")
	if held.code != 3 || !strings.Contains(held.stderr, "machine A") {
		t.Fatalf("B ran a session A's live claim holds: %s", held)
	}
	waitFor(t, 30*time.Second, "A's claim to expire", func() bool {
		return b.run("prompt", id, "remember pear").code == 0
	})
	if out := b.mustRun("prompt", id, "recall").stdout; !strings.Contains(out, "pear") {
		t.Fatalf("B's turn: %s", out)
	}
	logA, _ := os.ReadFile(filepath.Join(a.home, "sessions", id+".jsonl"))
	push := a.run("push", id)
	if push.code != 3 || !strings.Contains(push.stderr, "diverged") && !strings.Contains(push.stderr, "taken over") {
		t.Fatalf("A pushed over B's turns: %s", push)
	}
	pull := a.run("pull", id)
	if pull.code != 3 || !strings.Contains(pull.stderr, "diverged") || !strings.Contains(pull.stderr, "kandev fork") {
		t.Fatalf("A's pull of a diverged session: %s", pull)
	}
	if resume := a.run("resume", id); resume.code != 3 {
		t.Fatalf("A resumed a diverged session: %s", resume)
	}
	if now, _ := os.ReadFile(filepath.Join(a.home, "sessions", id+".jsonl")); string(now) != string(logA) {
		t.Fatal("a refused push, pull or resume changed A's log")
	}
	if rep := a.run("pull", id, "--replace"); rep.code != 3 || !strings.Contains(rep.stderr, "fork") {
		t.Fatalf("pull --replace without a fork: %s", rep)
	}
	// A's turn was cut off by the kill: closed first, so the fork holds it.
	a.mustRun("repair", id)
	fork := a.mustRun("--json", "fork", id, "--title", "A's copy")
	a.mustRun("pull", id, "--replace")
	evs := a.events(id)
	if !strings.Contains(agentText(evs, lastTurn(evs)), "pear") {
		t.Fatal("A's copy of the session is not B's after pull --replace")
	}
	var forked struct {
		Session state.Session `json:"session"`
	}
	decodeJSON(t, fork.stdout, &forked)
	if forked.Session.ID == "" {
		t.Fatalf("fork output: %s", fork.stdout)
	}
	if got := a.events(forked.Session.ID); len(got) == 0 {
		t.Fatal("the fork holds nothing")
	}
}

// TestSync_AMachineWhoseClaimWasTakenOverIsFencedAndStops: A's owner is
// frozen (SIGSTOP) mid-turn past its claim's TTL; B takes the claim and
// runs a turn; when A wakes, its renewal is refused, it stops (exit 3,
// naming B) and its later push is refused too.
func TestSync_AMachineWhoseClaimWasTakenOverIsFencedAndStops(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "daemon")
	a, b := r.a, r.b
	// The owner must be the command that is frozen below: on the default
	// path it would be a detached process the SIGSTOP never reaches.
	a.underCI()
	r.config("[sync]\nclaim_ttl_seconds = 1\n")
	id := r.shared()
	cmd := exec.Command(kandevBin, "prompt", id, "/say working\n/sleep 8000\n/say after")
	cmd.Dir, cmd.Env = a.cwd, a.env
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "A's turn to stream", func() bool {
		evs := a.events(id)
		return agentText(evs, lastTurn(evs)) != "" && lastTurn(evs) != "t1"
	})
	cmd.Process.Signal(syscall.SIGSTOP)
	waitFor(t, 20*time.Second, "B to take A's expired claim", func() bool {
		return b.run("prompt", id, "remember pear").code == 0
	})
	cmd.Process.Signal(syscall.SIGCONT)
	err := cmd.Wait()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != 3 || !strings.Contains(errb.String(), "machine B") {
		t.Fatalf("A went on after its claim was taken over: %v\n%s", err, errb.String())
	}
	if evs := a.events(id); strings.Contains(agentText(evs, lastTurn(evs)), "after") {
		t.Fatal("A's turn ran to its end after the takeover")
	}
	if push := a.run("push", id); push.code != 3 {
		t.Fatalf("the fenced machine's push: %s", push)
	}
	if out := b.mustRun("prompt", id, "recall").stdout; !strings.Contains(out, "pear") {
		t.Fatalf("B's copy: %s", out)
	}
}

// TestSync_TwoMachinesRacingForTheClaimRunOneTurnAtATime: 50 times, A and
// B prompt the same session at once. A claim is a compare-and-swap, so
// whenever both run, one waited for the other (it took the other's turn
// first); a loser exits 3 naming the winner; no log ever diverges.
func TestSync_TwoMachinesRacingForTheClaimRunOneTurnAtATime(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "daemon")
	a, b := r.a, r.b
	id := r.shared()
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	ran := 0
	for i := 0; i < rounds; i++ {
		results := make(chan result, 2)
		for _, w := range []*world{a, b} {
			go func(w *world) { results <- w.run("prompt", id, "/sleep 150") }(w)
		}
		for j := 0; j < 2; j++ {
			res := <-results
			switch {
			case res.code == 0:
				ran++
			case res.code == 3 && strings.Contains(res.stderr, "claimed by"):
			default:
				t.Fatalf("round %d: %s", i, res)
			}
		}
	}
	b.mustRun("pull", id)
	a.mustRun("pull", id)
	evsA, evsB := a.events(id), b.events(id)
	if len(evsA) != len(evsB) {
		t.Fatalf("the machines disagree: A %d events, B %d", len(evsA), len(evsB))
	}
	assertNoSeqGap(t, evsA)
	if n := len(ofType(evsA, eventlog.EventTurnStarted)) - 1; n != ran {
		t.Fatalf("%d prompts succeeded but the log has %d turns", ran, n)
	}
	if ran < rounds {
		t.Fatalf("only %d of %d rounds ran a turn", ran, rounds)
	}
	// Turns never overlap: each turn ends before the next one starts.
	open := ""
	for _, e := range evsA {
		switch e.Type {
		case eventlog.EventTurnStarted:
			if open != "" {
				t.Fatalf("turn %s started while %s ran", e.TurnID, open)
			}
			open = e.TurnID
		case eventlog.EventTurnEnded:
			open = ""
		}
	}
}

// killAt runs kandev with KANDEV_FAILPOINT=point and SIGKILLs it once
// reached() says it got there.
func killAt(t *testing.T, w *world, point string, reached func() bool, args ...string) {
	t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, append(append([]string{}, w.env...), "KANDEV_FAILPOINT="+point)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "kandev "+strings.Join(args, " ")+" to reach "+point, reached)
	cmd.Process.Kill()
	cmd.Wait()
}

// TestSync_SIGKILLDuringPushOrPullLeavesBothSidesConsistent cuts a push
// after the remote took it (before this machine recorded it) and a pull
// after it appended to the log (before the record and the sync file): the
// next push or pull completes, and both machines hold the same session.
func TestSync_SIGKILLDuringPushOrPullLeavesBothSidesConsistent(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := a.mustStart("remember apple")
	ref := "refs/kandev/sessions/" + id
	killAt(t, a, "after-push-accepted", func() bool { return r.remoteRefs()[ref] != "" }, "push", id)
	if out := a.mustRun("push", id).stdout; !strings.Contains(out, "up to date") {
		t.Fatalf("the push after a cut one: %s", out)
	}
	b.mustRun("pull", id)
	a.mustRun("prompt", id, "remember pear") // its claim's release pushes the turn
	logA, _ := os.ReadFile(filepath.Join(a.home, "sessions", id+".jsonl"))
	logB := filepath.Join(b.home, "sessions", id+".jsonl")
	before, _ := os.ReadFile(logB)
	killAt(t, b, "after-pull-appended", func() bool {
		now, _ := os.ReadFile(logB)
		return len(now) > len(before)
	}, "pull", id)
	if out := b.mustRun("pull", id).stdout; !strings.Contains(out, id) {
		t.Fatalf("the pull after a cut one: %s", out)
	}
	if got, _ := os.ReadFile(logB); string(got) != string(logA) {
		t.Fatalf("B's log after the completed pull differs from A's (%d vs %d bytes)", len(got), len(logA))
	}
	if out := b.mustRun("prompt", id, "recall").stdout; !strings.Contains(out, "apple") || !strings.Contains(out, "pear") {
		t.Fatalf("B's agent after the cut pull: %s", out)
	}
	a.mustRun("pull", id)
	assertNoSeqGap(t, a.events(id))
}

// TestSync_PushRefusesASessionWithAnUnredactedSecret: only redacted data
// leaves the machine; a log line that still holds a secret (written by
// hand here) stops the push with one line, and nothing reaches the remote.
func TestSync_PushRefusesASessionWithAnUnredactedSecret(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	id := r.a.mustStart("remember apple")
	f, err := os.OpenFile(filepath.Join(r.a.home, "sessions", id+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := len(r.a.events(id)) + 1
	fmt.Fprintf(f, `{"seq":%d,"timestamp":"2026-12-01T10:00:00Z","type":"agent_message","session_id":"%s","role":"assistant","content":"the key is AKIAIOSFODNN7EXAMPLE and ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`+"\n", seq, id)
	f.Close()
	push := r.a.run("push", id)
	if push.code != 1 || !strings.Contains(push.stderr, "secret") || strings.Count(strings.TrimSpace(push.stderr), "\n") != 0 {
		t.Fatalf("push of an unredacted session: %s", push)
	}
	if refs := r.remoteRefs(); len(refs) != 0 {
		t.Fatalf("something reached the remote: %v", refs)
	}
}

// TestSync_PulledSessionWithoutALocalClonePauses: pulled outside any clone
// of the project, the worktree recorded on the other machine is not here,
// and the session pauses (exit 5) as any session whose worktree is gone.
func TestSync_PulledSessionWithoutALocalClonePauses(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	id := r.a.mustStart("remember apple")
	r.a.mustRun("push", id)
	// Machines share this file system: A's clone must not be found by its path.
	if err := os.Rename(r.a.cwd, r.a.cwd+"-elsewhere"); err != nil {
		t.Fatal(err)
	}
	elsewhere := newWorld(t)
	elsewhere.env = append(elsewhere.env, "KANDEV_MACHINE=C", "CI=1")
	dry := elsewhere.mustRun("pull", "--all", "--dry-run", "--remote", r.bare)
	if !strings.Contains(dry.stdout, id) || !strings.Contains(dry.stdout, "remote only") {
		t.Fatalf("pull --all --dry-run does not list the remote-only session: %s", dry)
	}
	if _, err := os.Stat(filepath.Join(elsewhere.home, "sessions", id+".json")); err == nil {
		t.Fatal("a dry run pulled")
	}
	if list := elsewhere.mustRun("list").stdout; !strings.Contains(list, id) || !strings.Contains(list, "remote") {
		t.Fatalf("list does not mark the remote-only session:\n%s", list)
	}
	elsewhere.mustRun("pull", "--all", "--remote", r.bare)
	if list := elsewhere.mustRun("list").stdout; strings.Contains(list, "remote") {
		t.Fatalf("a pulled session is still listed as remote-only:\n%s", list)
	}
	if resume := elsewhere.run("resume", id); resume.code != 5 || !strings.Contains(resume.stderr, "worktree") {
		t.Fatalf("resume of a session whose worktree is on another machine: %s", resume)
	}
}

// TestSync_CIJobStoppedBySIGTERMIsRecoveredByTheNextJob is the CI recipe:
// job 1 (auto push) is stopped by SIGTERM at its timeout; job 2, a fresh
// home in a fresh checkout, pulls everything and recovers the cut turn once.
func TestSync_CIJobStoppedBySIGTERMIsRecoveredByTheNextJob(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "daemon")
	job1, job2 := r.a, r.b
	r.config("[sync]\nauto = true\n")
	id := job1.mustStart("remember apple")
	if sig := job1.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, "prompt", id, sleepingTurn); sig.code != 143 {
		t.Fatalf("SIGTERM: %s", sig.result)
	}
	job2.mustRun("pull", "--all")
	job2.mustRun("recover", "--all")
	if n := continuations(job2.events(id)); n != 1 {
		t.Fatalf("job 2 continued the cut turn %d times", n)
	}
	job2.mustRun("recover", "--all")
	if n := continuations(job2.events(id)); n != 1 {
		t.Fatalf("a second recover continued again: %d", n)
	}
	// Job 2 pushed what it did: a third job finds nothing left to continue.
	job3 := r.machine("C", filepath.Dir(r.bare))
	job3.mustRun("pull", "--all")
	if evs := job3.events(id); continuations(evs) != 1 || len(evs) != len(job2.events(id)) {
		t.Fatalf("job 3 sees %d events (%d continuations), job 2 has %d", len(evs), continuations(evs), len(job2.events(id)))
	}
}

// TestSync_AWarmOwnerDoesNotBlockAnotherMachine: A's owner lingers with its
// agent warm, holding no claim while idle, so B runs the session meanwhile;
// A's next prompt then runs on B's events (it took them first).
func TestSync_AWarmOwnerDoesNotBlockAnotherMachine(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := r.shared()
	a.mustRun("prompt", "--linger", "20s", id, "remember pear")
	waitFor(t, 10*time.Second, "A's owner to linger", func() bool { return a.ownerAlive(id) })
	waitFor(t, 10*time.Second, "A's idle owner to give its claim up", func() bool {
		return strings.Contains(r.gitOut(r.bare, "log", "-1", "--format=%B", "refs/kandev/owners/"+id), `"released":true`)
	})
	if !a.ownerAlive(id) {
		t.Fatal("A's owner did not linger")
	}
	if out := b.mustRun("prompt", id, "remember plum").stdout; !strings.Contains(out, "plum") {
		t.Fatalf("B's turn: %s", out)
	}
	out := a.mustRun("prompt", id, "recall").stdout
	if !strings.Contains(out, "pear") || !strings.Contains(out, "plum") {
		t.Fatalf("A's next turn does not know B's: %s", out)
	}
	a.run("close", id)
}

// TestSync_PulledElsewhereMapsToTheCloneOtherSessionsUse: pulled from a
// directory that is no clone, a session still maps to this machine's clone
// of its repository when another session here works in it.
func TestSync_PulledElsewhereMapsToTheCloneOtherSessionsUse(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := a.mustStart("remember apple")
	a.mustRun("push", id)
	if _, res := b.start("a session of B's own"); res.code != 0 {
		t.Fatal(res)
	}
	clone := b.cwd
	b.cwd = t.TempDir()
	b.mustRun("pull", id, "--remote", r.bare)
	if s := b.session(id); s.Worktree == nil || s.Worktree.Path != clone {
		t.Fatalf("pulled outside a clone, the worktree is %+v, want %s", s.Worktree, clone)
	}
}
