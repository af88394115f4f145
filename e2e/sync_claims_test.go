//go:build unix

package e2e_test

// The claim protocol as two machines live it: a warm owner claims a session
// that started travelling while it lingered, a command returns once its
// owner gave the claim up, a silent remote refuses a turn unless --offline,
// and every way two copies diverge is refused with the commands that keep
// both, which do.

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// TestSync_AWarmOwnerClaimsASessionPushedWhileItLingered: A's owner was
// warm before the session ever travelled; A pushes, B pulls and runs a
// turn. A's next prompt is refused while B holds the claim, and once B is
// done it runs on B's events (never on A's older copy), so A's push is no
// divergence.
func TestSync_AWarmOwnerClaimsASessionPushedWhileItLingered(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := a.startWarm("60s", "remember apple")
	a.mustRun("push", id)
	b.mustRun("pull", id)
	b.mustRun("prompt", id, "remember plum")
	busy := exec.Command(kandevBin, "prompt", id, "/sleep 4000")
	busy.Dir, busy.Env = b.cwd, b.env
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "B to hold the claim", func() bool {
		msg := r.gitOut(r.bare, "log", "-1", "--format=%B", "refs/kandev/owners/"+id)
		return strings.Contains(msg, `"machine":"B"`) && !strings.Contains(msg, `"released":true`)
	})
	if held := a.run("prompt", id, "remember pear"); held.code != 3 || !strings.Contains(held.stderr, "machine B") {
		busy.Wait()
		t.Fatalf("A's warm owner ran a turn while B held the claim: %s", held)
	}
	if err := busy.Wait(); err != nil {
		t.Fatalf("B's turn: %v", err)
	}
	if out := a.mustRun("prompt", id, "recall").stdout; !strings.Contains(out, "plum") {
		t.Fatalf("A's next turn after B's does not know B's turn:\n%s", out)
	}
	if push := a.run("push", id); push.code != 0 {
		t.Fatalf("A's push after its warm owner's turn: %s", push)
	}
	b.mustRun("pull", id)
	assertNoSeqGap(t, b.events(id))
	if la, lb := a.events(id), b.events(id); len(la) != len(lb) {
		t.Fatalf("the machines disagree: A %d events, B %d", len(la), len(lb))
	}
}

// TestSync_OnceAPromptReturnsAnotherMachineMayRunTheSession: A's prompt
// leaves a warm owner; the moment it returns, the claim is given up (and
// shown so), so B's prompt right after runs instead of being told the
// claim is held for the TTL.
func TestSync_OnceAPromptReturnsAnotherMachineMayRunTheSession(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "path")
	a, b := r.a, r.b
	id := r.shared()
	a.closeOnCleanup(id)
	for i, word := range []string{"pear", "plum", "fig"} {
		a.mustRun("prompt", "--linger", "30s", id, "remember "+word)
		if res := b.run("prompt", id, "recall"); res.code != 0 || !strings.Contains(res.stdout, word) {
			t.Fatalf("round %d: B right after A's prompt returned: %s", i, res)
		}
		if st := b.mustRun("status", id).stdout; strings.Contains(st, "held by A") {
			t.Fatalf("round %d: B's status shows A's claim held:\n%s", i, st)
		}
	}
}

// TestSync_ARemoteThatDoesNotAnswerRefusesATurnUnlessOffline: the git
// daemon is frozen. A prompt of the travelling session is refused in one
// line (exit 1) that names --offline, and appends nothing; with --offline
// it runs on this machine's copy and the log says so; once the remote
// answers again the push sends it (nobody else ran the session).
func TestSync_ARemoteThatDoesNotAnswerRefusesATurnUnlessOffline(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	r := newSyncRig(t, "daemon")
	a := r.a
	id := r.shared()
	a.config("[sync]\ntimeout_seconds = 2\n")
	if err := r.daemon.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			r.daemon.Process.Signal(syscall.SIGCONT)
			thawed = true
		}
	}
	t.Cleanup(thaw)
	before := len(a.events(id))
	res, _ := runWithin(a, 40*time.Second, "prompt", id, "remember pear")
	if res.code != 1 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, "--offline") || strings.Contains(res.stdout, "pear") {
		t.Fatalf("prompt of a travelling session against a frozen remote: %s", res)
	}
	if n := len(a.events(id)); n != before {
		t.Fatalf("the refused prompt appended %d events", n-before)
	}
	res, _ = runWithin(a, 40*time.Second, "prompt", "--offline", id, "remember pear")
	if res.code != 0 || !strings.Contains(res.stdout, "pear") || !strings.Contains(res.stderr, "offline") {
		t.Fatalf("prompt --offline against a frozen remote: %s", res)
	}
	if marks := markersOf(a.events(id), "ran_offline"); len(marks) != 1 {
		t.Fatalf("%d ran_offline markers, want 1", len(marks))
	}
	thaw()
	a.config("[sync]\ntimeout_seconds = 30\n")
	if push := a.run("push", id); push.code != 0 || !strings.Contains(push.stdout, "pushed") {
		t.Fatalf("the push of the offline turn: %s", push)
	}
}

// keepBothCmd finds the commands a diverged refusal prints.
var keepBothCmd = regexp.MustCompile(`kandev (repair|fork|pull) (\S+)( --replace)?`)

// userTexts are the user messages of a log.
func userTexts(evs []eventlog.Event) []string {
	var out []string
	for _, e := range ofType(evs, eventlog.EventUserMessage) {
		out = append(out, e.Content)
	}
	return out
}

// recoverByPrintedCommands runs, on w, the commands the refusal printed,
// and checks that nothing is lost: w's copy of id is the remote's (other's)
// and a fork of id holds every user message w's copy held.
func recoverByPrintedCommands(t *testing.T, w, other *world, id, refusal string) {
	t.Helper()
	mine := userTexts(w.events(id))
	cmds := keepBothCmd.FindAllStringSubmatch(refusal, -1)
	if len(cmds) < 2 || cmds[len(cmds)-1][3] == "" {
		t.Fatalf("the refusal names no commands that keep both: %s", refusal)
	}
	for _, c := range cmds {
		args := []string{c[1], c[2]}
		if c[3] != "" {
			args = append(args, "--replace")
		}
		w.mustRun(args...)
	}
	if got, want := len(w.events(id)), len(other.events(id)); got != want {
		t.Fatalf("after the printed commands this copy has %d events, the other machine's %d", got, want)
	}
	h, _ := state.OpenHome(w.home)
	all, _ := h.ListSessions()
	for _, s := range all {
		if s.ParentID != id {
			continue
		}
		if kept := strings.Join(userTexts(w.events(s.ID)), "\n"); containsAll(kept, mine) {
			return
		}
	}
	t.Fatalf("no fork of %s holds this machine's messages %q", id, mine)
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestSync_EveryDivergenceRouteIsRefusedAndThePrintedCommandsKeepBoth
// walks the ways two copies diverge: a claim that expired under a frozen
// owner (fenced), a machine killed mid-turn, and a warm owner that ran
// offline while the other machine ran the session. Each refusal says what
// to run; running it keeps this machine's turns in a fork and takes the
// other's. A fork made at an earlier turn does not let --replace through.
func TestSync_EveryDivergenceRouteIsRefusedAndThePrintedCommandsKeepBoth(t *testing.T) {
	// Serial: claims are timed, and the suite's parallel load made them
	// expire early (docs/testing.md).
	t.Run("expired claim", func(t *testing.T) {
		t.Parallel()
		r := newSyncRig(t, "path")
		a, b := r.a, r.b
		r.config("[sync]\nclaim_ttl_seconds = 1\n")
		id := r.shared()
		a.mustRun("prompt", id, "remember pear")
		cmd := exec.Command(kandevBin, "prompt", id, "/say working\n/sleep 8000\n/say after")
		var stderr strings.Builder
		cmd.Dir, cmd.Env, cmd.Stderr = a.cwd, a.env, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "A's turn to stream", func() bool {
			evs := a.eventsSoFar(id)
			return agentText(evs, lastTurn(evs)) == "working"
		})
		cmd.Process.Signal(syscall.SIGSTOP)
		waitFor(t, 20*time.Second, "B to take A's expired claim", func() bool {
			return b.run("prompt", id, "remember plum").code == 0
		})
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(stderr.String(), "taken over by machine B") {
			t.Fatalf("A's prompt (its owner), taken over: exit %d, stderr %q; want 3 and the takeover named", code, stderr.String())
		}
		pull := a.run("pull", id)
		if pull.code != 3 || !strings.Contains(pull.stderr, "diverged") {
			t.Fatalf("A's pull after its claim expired: %s", pull)
		}
		// A fork at an earlier turn keeps less than this copy: refused.
		a.mustRun("fork", id, "--at", firstBoundary(a.events(id)))
		if rep := a.run("pull", id, "--replace"); rep.code != 3 || !strings.Contains(rep.stderr, "kandev fork "+id) {
			t.Fatalf("pull --replace with only an earlier fork: %s", rep)
		}
		recoverByPrintedCommands(t, a, b, id, pull.stderr)
	})
	t.Run("expired claim of a warm owner", func(t *testing.T) {
		t.Parallel()
		r := newSyncRig(t, "path")
		a, b := r.a, r.b
		r.config("[sync]\nclaim_ttl_seconds = 1\n")
		id := r.shared()
		a.closeOnCleanup(id)
		// --linger: the owner is detached and the command follows it; the
		// owner, not the command, is frozen past its claim's expiry.
		cmd := exec.Command(kandevBin, "prompt", "--linger", "30s", id, "/say working\n/sleep 8000\n/say after")
		var stderr strings.Builder
		cmd.Dir, cmd.Env, cmd.Stderr = a.cwd, a.env, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "A's turn to stream", func() bool {
			evs := a.eventsSoFar(id)
			return agentText(evs, lastTurn(evs)) == "working"
		})
		owner := a.session(id).OwnerPID
		if owner == 0 || owner == cmd.Process.Pid {
			t.Fatalf("owner pid %d (command %d): want a detached owner", owner, cmd.Process.Pid)
		}
		syscall.Kill(owner, syscall.SIGSTOP)
		waitFor(t, 20*time.Second, "B to take A's expired claim", func() bool {
			return b.run("prompt", id, "remember plum").code == 0
		})
		syscall.Kill(owner, syscall.SIGCONT)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != 3 || !strings.Contains(stderr.String(), "taken over by machine B") {
			t.Fatalf("A's prompt, whose owner was taken over: exit %d (%v), stderr %q; want 3 and the takeover named", code, err, stderr.String())
		}
		if strings.Contains(stderr.String(), "Ctrl-C") {
			t.Fatalf("a takeover reported as a Ctrl-C: %q", stderr.String())
		}
		pull := a.run("pull", id)
		if pull.code != 3 || !strings.Contains(pull.stderr, "diverged") {
			t.Fatalf("A's pull after its claim was taken over: %s", pull)
		}
		recoverByPrintedCommands(t, a, b, id, pull.stderr)
	})
	t.Run("killed machine", func(t *testing.T) {
		t.Parallel()
		r := newSyncRig(t, "path")
		a, b := r.a, r.b
		r.config("[sync]\nclaim_ttl_seconds = 2\n")
		id := r.shared()
		a.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGKILL}, "prompt", id, "remember pear\n"+sleepingTurn)
		waitFor(t, 20*time.Second, "B to take the killed machine's claim", func() bool {
			return b.run("prompt", id, "remember plum").code == 0
		})
		resume := a.run("resume", id)
		if resume.code != 3 || !strings.Contains(resume.stderr, "diverged") || !strings.Contains(resume.stderr, "kandev repair "+id) {
			t.Fatalf("A's resume after B ran the session: %s", resume)
		}
		recoverByPrintedCommands(t, a, b, id, resume.stderr)
	})
	t.Run("warm owner offline", func(t *testing.T) {
		t.Parallel()
		r := newSyncRig(t, "daemon")
		a, b := r.a, r.b
		// B reaches the same repository by path: only A loses the remote.
		// (Its origin keeps the daemon's URL, which maps A's worktree to B's
		// clone; a pulled cwd that maps to no clone would pause the session.)
		r.gitOut(b.cwd, "remote", "add", "bypath", r.bare)
		r.gitOut(b.cwd, "config", "remote.bypath.fetch", "+refs/heads/*:refs/remotes/bypath/*")
		b.config("[sync]\nremote = \"bypath\"\n")
		id := r.shared()
		a.config("[sync]\ntimeout_seconds = 2\n")
		r.daemon.Process.Signal(syscall.SIGSTOP)
		t.Cleanup(func() { r.daemon.Process.Signal(syscall.SIGCONT) })
		a.closeOnCleanup(id)
		if res, _ := runWithin(a, 40*time.Second, "prompt", "--offline", "--linger", "30s", id, "remember pear"); res.code != 0 {
			t.Fatalf("A's offline prompt: %s", res)
		}
		b.mustRun("prompt", id, "remember plum")
		r.daemon.Process.Signal(syscall.SIGCONT)
		a.config("")
		push := a.run("push", id)
		if push.code != 3 || !strings.Contains(push.stderr, "diverged") {
			t.Fatalf("A's push of its offline turn after B's: %s", push)
		}
		a.mustRun("close", "--now", id)
		recoverByPrintedCommands(t, a, b, id, push.stderr)
	})
}

// firstBoundary is the seq of the first turn's end, as fork --at takes it.
func firstBoundary(evs []eventlog.Event) string {
	for _, e := range evs {
		if e.Type == eventlog.EventTurnEnded {
			return strconv.FormatInt(e.Seq, 10)
		}
	}
	return "0"
}
