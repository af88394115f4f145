package e2e_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestPause_APromptRunByADetachedOwnerLiftsThePause(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{{"prompt", "--linger", "2s"}, {"--permissions", "defer", "prompt"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			w := newWorld(t)
			id, _ := w.start()
			w.closeOnCleanup(id)
			w.crashMidTurn(id, "--permissions", "approve-all")
			if r := w.run("resume", id); r.code != 5 {
				t.Fatalf("the session is paused: %s", r)
			}
			args := append(append([]string{}, flags...), id, "remember FIG")
			if flags[0] == "--permissions" {
				args = append([]string{"--permissions", "defer", "prompt"}, id, "remember FIG")
			}
			r := w.run(args...)
			if r.code != 0 || !strings.Contains(r.stdout, "FIG") {
				t.Fatalf("the operator's prompt through a detached owner: %s", r)
			}
			evs := w.events(id)
			if continuations(evs) != 0 || !hasMarker(evs, "continuation_resumed", "lifted by the operator's prompt") {
				t.Fatalf("the pause was not lifted by the prompt (continuations %d)", continuations(evs))
			}
			if st := w.status(id); st.Status.Pause != nil {
				t.Fatalf("still paused: %+v", st.Status)
			}
		})
	}
}

func TestInbox_ANoFollowInputBehindAFailedOneIsServedInOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("--linger", "0")
	w.closeOnCleanup(id)
	owner, _ := w.background("prompt", id, "/sleep 1500")
	waitFor(t, 20*time.Second, "the owner's turn", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	crasher, _ := w.background("prompt", id, "/crash")
	waitFor(t, 20*time.Second, "the crashing prompt to queue", func() bool { return w.mustRunStatusPending(id) == 1 })
	r := w.mustRun("prompt", id, "--no-follow", "/say after-the-crash")
	if !strings.Contains(r.stdout, "queued as") {
		t.Fatalf("the --no-follow prompt was not queued: %s", r)
	}
	owner.Wait()
	crasher.Wait()
	waitFor(t, 30*time.Second, "the --no-follow input to be served", func() bool {
		return strings.Contains(agentText(w.eventsSoFar(id), ""), "after-the-crash")
	})
	// The owner that served it may linger: the next prompt is queued for it.
	w.mustRun("prompt", id, "/say later")
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	text := agentText(evs, "")
	if i, j := strings.Index(text, "after-the-crash"), strings.Index(text, "later"); i < 0 || j < i {
		t.Fatalf("the acknowledged input ran out of order: %q", text)
	}
	if strings.Count(text, "after-the-crash") != 1 {
		t.Fatalf("served more than once: %q", text)
	}
}

func TestLease_RewindClearAndCompactRefuseAnotherHoldersLeaseUnlessForced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("remember PEAR")
	w.mustRun("resume", id, "--holder", "editor:other")
	release := "kandev detach " + id + " --holder editor:other"
	for _, args := range [][]string{{"compact", id}, {"rewind", id, "--to", "0"}, {"clear", id}} {
		r := w.run(args...)
		if r.code != 3 || !strings.Contains(r.stderr, release) || !strings.Contains(r.stderr, "--force") {
			t.Errorf("%s under another holder's lease: %s", args[0], r)
		}
	}
	if n := len(ofType(w.events(id), eventlog.EventRewind)); n != 0 {
		t.Fatalf("a refused rewind was applied (%d rewind events)", n)
	}
	w.mustRun("clear", id, "--force")
	// The lease holder passes the lease check; right after a clear there is
	// nothing to compact yet (exit 5), which is the next rule.
	if r := w.run("compact", id, "--holder", "editor:other"); r.code != 5 || !strings.Contains(r.stderr, "nothing to compact yet") {
		t.Fatalf("compact by the lease holder right after a clear: %s", r)
	}
	if n := len(ofType(w.events(id), eventlog.EventRewind)); n != 1 {
		t.Fatalf("%d rewind events after a forced clear", n)
	}
}

// secretShape is a key of a shape the log redacts.
const secretShape = "sk-ant-api03-Zq8wXv7Ru6Ts5Rq4Pp3Oo2Nn1Mm0"

// assertNoSecretAtRest fails when any file under the home (but the demo
// agent's own conversation store, which is the agent's, like ~/.claude)
// holds secret.
func assertNoSecretAtRest(t *testing.T, home, secret string) {
	t.Helper()
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "demo-agent" {
				return filepath.SkipDir
			}
			return nil
		}
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
}

func TestSecrets_NoPromptIsKeptAsTypedUnderTheHome(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember "+secretShape)
	assertNoSecretAtRest(t, w.home, secretShape)
	w.mustRun("prompt", id, "my key is "+secretShape+" keep it")
	assertNoSecretAtRest(t, w.home, secretShape)
	// Queued while the owner is busy, then served: the inbox forgets it.
	busy, _ := w.background("prompt", id, "/sleep 1000")
	w.mustRun("wait", id, "--until", "running", "--timeout", "20s")
	w.mustRun("prompt", id, "--no-follow", "again "+secretShape)
	busy.Wait()
	waitFor(t, 20*time.Second, "the queued prompt to be served", func() bool { return w.mustRunStatusPending(id) == 0 })
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	assertNoSecretAtRest(t, w.home, secretShape)
}

func TestSecrets_AQueuedPromptKilledWithItsOwnerIsGoneOnceResumeServesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	w.mustRun("prompt", id, "--no-follow", "/say working\n/sleep 60000")
	waitFor(t, 20*time.Second, "the agent to answer", func() bool { return len(ofType(w.eventsSoFar(id), eventlog.EventAgentMessage)) > 0 })
	w.mustRun("prompt", id, "--no-follow", "use "+secretShape)
	pid := w.session(id).OwnerPID
	_ = kill(pid, syscall.SIGKILL)
	w.waitOwnerGone(id, 10*time.Second)
	killSurvivors(w.home, id)
	b, _ := os.ReadFile(filepath.Join(w.home, "sessions", id+".inbox.jsonl"))
	if !bytes.Contains(b, []byte(secretShape)) {
		t.Fatal("the unserved prompt is not in the inbox: it is needed until it is served")
	}
	w.mustRun("resume", id, "--linger", "0")
	served := false
	for _, e := range ofType(w.events(id), eventlog.EventUserMessage) {
		served = served || strings.HasPrefix(e.Content, "use ") && !strings.Contains(e.Content, secretShape)
	}
	if !served {
		t.Fatal("the queued prompt was not served (redacted in the log) after the resume")
	}
	assertNoSecretAtRest(t, w.home, secretShape)
}

func TestSecrets_AStartWhoseDetachedOwnerIsKilledLeavesNoPromptBehind(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	starter, out := w.background("start", "--linger", "60s", "remember "+secretShape+"\n/sleep 60000")
	defer starter.Wait()
	var id string
	waitFor(t, 20*time.Second, "the session id", func() bool {
		id = strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
		return id != "" && strings.Contains(out.String(), "\n")
	})
	w.closeOnCleanup(id)
	waitFor(t, 20*time.Second, "the turn to run", func() bool { return w.session(id).CurrentTurn != "" && w.session(id).OwnerPID != 0 })
	assertNoSecretAtRest(t, w.home, secretShape)
	_ = kill(w.session(id).OwnerPID, syscall.SIGKILL)
	w.waitOwnerGone(id, 10*time.Second)
	starter.Process.Kill()
	killSurvivors(w.home, id)
	assertNoSecretAtRest(t, w.home, secretShape)
	if _, err := os.Stat(filepath.Join(w.home, "sessions", id+".prompt")); err == nil {
		t.Fatal("a prompt handoff file was left behind")
	}
}

// exitOf waits for cmd and returns its exit code.
func exitOf(t *testing.T, cmd interface{ Wait() error }, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("the command did not end within %s", within)
	}
	return -1
}

func TestExit_APromptCancelledFromAnotherProcessExits130(t *testing.T) {
	t.Parallel()
	for _, linger := range []string{"0", "60s"} {
		t.Run("linger "+linger, func(t *testing.T) {
			w := newWorld(t)
			id, _ := w.start("--linger", linger)
			w.closeOnCleanup(id)
			cmd, _ := w.background("prompt", id, "/say working\n/sleep 60000")
			w.mustRun("wait", id, "--until", "running", "--timeout", "20s")
			waitFor(t, 20*time.Second, "the agent to answer", func() bool { return len(ofType(w.eventsSoFar(id), eventlog.EventAgentMessage)) > 0 })
			w.mustRun("cancel", id)
			if code := exitOf(t, cmd, 20*time.Second); code != 130 {
				t.Fatalf("a prompt whose turn was cancelled exited %d, want 130", code)
			}
		})
	}
}

func TestExit_AFollowerOfADetachedOwnerExitsAsItsOwnerWasStopped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			w := newWorld(t)
			id := w.startWarm("60s")
			cmd, _ := w.background("prompt", id, "/say working\n/sleep 60000")
			waitFor(t, 20*time.Second, "the agent to answer", func() bool { return len(ofType(w.eventsSoFar(id), eventlog.EventAgentMessage)) > 0 })
			_ = kill(w.session(id).OwnerPID, tc.sig)
			if code := exitOf(t, cmd, 20*time.Second); code != tc.want {
				t.Fatalf("the follower exited %d after its owner got %s, want %d", code, tc.sig, tc.want)
			}
		})
	}
}
