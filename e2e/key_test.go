package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// keyWorld is a home with one idle demo session and no lingering owners.
func keyWorld(t *testing.T) (*world, string) {
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--linger", "0")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	return w, id
}

// keyedTurns are the turn_started events that carry key.
func keyedTurns(evs []eventlog.Event, key string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.Type == eventlog.EventTurnStarted && e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

func TestKey_TenProcessesRetryingOneKeySendItOnceAndAllPrintItsAnswer(t *testing.T) {
	t.Parallel()
	w, id := keyWorld(t)
	const msg = "/sleep 300\n/say ANSWER-OF-K1\n"
	results := make([]result, 10)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = w.runInput(msg, "prompt", id, "--key", "k1", "--linger", "0", "-")
		}(i)
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || !strings.Contains(r.stdout, "ANSWER-OF-K1") {
			t.Fatalf("racer %d: %s", i, r)
		}
	}
	evs := w.events(id)
	if n := len(keyedTurns(evs, "k1")); n != 1 {
		t.Fatalf("%d turns carry key k1, want exactly 1", n)
	}
	if n := len(ofType(evs, eventlog.EventTurnStarted)); n != 1 {
		t.Fatalf("%d turns in the log, want 1", n)
	}
	if n := w.received(strings.TrimSuffix(msg, "\n")); n != 1 {
		t.Fatalf("the agent received the message %d times, want 1", n)
	}
}

func TestKey_ARetryAfterTheTurnEndedPrintsItAgainWithItsExitCode(t *testing.T) {
	t.Parallel()
	w, id := keyWorld(t)
	first := w.run("prompt", id, "--key", "ok", "--linger", "0", "/say FIRST-ANSWER")
	again := w.run("prompt", id, "--key", "ok", "--linger", "0", "/say FIRST-ANSWER")
	if first.code != 0 || again.code != 0 || !strings.Contains(again.stdout, "FIRST-ANSWER") {
		t.Fatalf("first: %s\nretry: %s", first, again)
	}
	// A failed turn: the retry exits as the first did (6, agent failure), sending nothing.
	crash := w.run("prompt", id, "--key", "boom", "--linger", "0", "/crash")
	retry := w.run("prompt", id, "--key", "boom", "--linger", "0", "/crash")
	if crash.code != 6 || retry.code != 6 {
		t.Fatalf("crash: %s\nretry: %s", crash, retry)
	}
	evs := w.events(id)
	if len(keyedTurns(evs, "ok")) != 1 || len(keyedTurns(evs, "boom")) != 1 || len(ofType(evs, eventlog.EventTurnStarted)) != 2 {
		t.Fatalf("want one turn per key and two in all: %d turns", len(ofType(evs, eventlog.EventTurnStarted)))
	}
	// Another key is another message.
	if r := w.mustRun("prompt", id, "--key", "other", "--linger", "0", "/say FIRST-ANSWER"); !strings.Contains(r.stdout, "FIRST-ANSWER") {
		t.Fatalf("other key: %s", r)
	}
	if n := w.received("/say FIRST-ANSWER"); n != 2 {
		t.Fatalf("the agent received the message %d times, want 2 (two keys)", n)
	}
}

func TestKey_ARetryAfterSIGKILLAtEachPointOfTheSendNeitherLosesNorDuplicatesTheTurn(t *testing.T) {
	t.Parallel()
	points := []struct {
		name, failpoint string
		// sent: the agent had the message before the kill.
		sent bool
	}{
		{"before queueing", "before-key-queued", false},
		{"after queueing", "after-key-queued", false},
		{"after prompt_sent", "", true},
		{"after turn_ended", "after-keyed-turn", true},
	}
	for _, p := range points {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w, id := keyWorld(t)
			msg := "/sleep 1500\n/say ANSWER-" + strings.ReplaceAll(p.name, " ", "-")
			arrived := filepath.Join(t.TempDir(), "arrived")
			env := []string{"KANDEV_FAILPOINT=" + p.failpoint, "KANDEV_FAILPOINT_FILE=" + arrived}
			b := w.launchInput(msg, env, "prompt", id, "--key", "K", "--linger", "0", "-")
			if p.failpoint != "" {
				waitFor(t, 30*time.Second, "the failpoint", func() bool { _, err := os.Stat(arrived); return err == nil })
			} else {
				waitFor(t, 30*time.Second, "the agent to have the message", func() bool { return w.received(msg) == 1 })
			}
			b.stop(t, syscall.SIGKILL)
			if got := w.received(msg); p.sent && got != 1 || !p.sent && got != 0 {
				t.Fatalf("before the retry the agent received the message %d times", got)
			}
			r := w.runInput(msg, "prompt", id, "--key", "K", "--linger", "0", "-")
			if r.code != 0 {
				t.Fatalf("retry: %s", r)
			}
			evs := w.events(id)
			if n := len(keyedTurns(evs, "K")); n != 1 {
				t.Fatalf("%d turns carry the key, want 1", n)
			}
			if n := w.received(msg); n != 1 {
				t.Fatalf("the agent received the message %d times, want 1", n)
			}
			switch p.name {
			case "after prompt_sent":
				// Cut off once sent: its one continuation is the retry's answer.
				if continuations(evs) != 1 || r.stdout == "" {
					t.Fatalf("want the cut-off turn continued once and that shown: %d continuations\n%s", continuations(evs), r)
				}
			default:
				if !strings.Contains(r.stdout, "ANSWER-") || continuations(evs) != 0 {
					t.Fatalf("retry printed %q (%d continuations)", r.stdout, continuations(evs))
				}
			}
			// A third try changes nothing.
			w.runInput(msg, "prompt", id, "--key", "K", "--linger", "0", "-")
			if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != len(ofType(evs, eventlog.EventTurnStarted)) {
				t.Fatalf("a third try with the key started another turn")
			}
		})
	}
}

// launchInput is launch with stdin.
func (w *world) launchInput(stdin string, extraEnv []string, args ...string) *background {
	w.t.Helper()
	b := &background{cmd: exec.Command(kandevBin, args...)}
	b.cmd.Dir, b.cmd.Env = w.cwd, append(append([]string{}, w.env...), extraEnv...)
	b.cmd.Stdin = strings.NewReader(stdin)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { b.cmd.Process.Kill(); b.cmd.Wait() })
	return b
}

func TestKey_StartWithAKeyCreatesOneSessionAcrossRacersAndRetries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	const msg = "/sleep 300\n/say STARTED-ONCE\n"
	results := make([]result, 5)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = w.runInput(msg, "start", "--key", "s1", "--linger", "0", "-")
		}(i)
	}
	wg.Wait()
	id := w.onlySession()
	for i, r := range results {
		if r.code != 0 || !strings.HasPrefix(r.stdout, id+"\n") || !strings.Contains(r.stdout, "STARTED-ONCE") {
			t.Fatalf("racer %d: %s", i, r)
		}
	}
	if n := w.received(strings.TrimSuffix(msg, "\n")); n != 1 {
		t.Fatalf("the agent received the first prompt %d times", n)
	}
	// Killed while the agent has the first prompt: the retry continues it, once.
	b := w.launchInput("/sleep 1500\n/say SECOND", nil, "start", "--key", "s2", "--linger", "0", "-")
	waitFor(t, 30*time.Second, "the agent to have the prompt", func() bool { return w.received("/sleep 1500\n/say SECOND") == 1 })
	b.stop(t, syscall.SIGKILL)
	r := w.runInput("/sleep 1500\n/say SECOND", "start", "--key", "s2", "--linger", "0", "-")
	h, _ := state.OpenHome(w.home)
	all, _ := h.ListSessions()
	if r.code != 0 || len(all) != 2 {
		t.Fatalf("retry after SIGKILL: %d sessions: %s", len(all), r)
	}
	id2 := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	evs := w.events(id2)
	if n := len(userMessages(evs, eventlog.SourceInitial)); n != 1 || continuations(evs) != 1 || w.received("/sleep 1500\n/say SECOND") != 1 {
		t.Fatalf("want one first turn, continued once: %d initial, %d continuations", n, continuations(evs))
	}
}

func TestKey_AKeyedPromptToAWarmOwnerIsServedOnceAndRetriesPrintIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s")
	for i := 0; i < 3; i++ {
		r := w.run("prompt", id, "--key", "warm", "/say WARM-ANSWER")
		if r.code != 0 || !strings.Contains(r.stdout, "WARM-ANSWER") {
			t.Fatalf("try %d: %s", i, r)
		}
	}
	if !w.ownerAlive(id) {
		t.Fatal("the warm owner is gone")
	}
	if n := len(keyedTurns(w.events(id), "warm")); n != 1 || w.received("/say WARM-ANSWER") != 1 {
		t.Fatalf("%d keyed turns, agent received it %d times; want 1 and 1", n, w.received("/say WARM-ANSWER"))
	}
	// Without a live owner a detached one is started for it (the default linger).
	w.mustRun("close", id)
	r := w.run("prompt", id, "--key", "cold", "--linger", "30s", "/say COLD-ANSWER")
	if r.code != 0 || !strings.Contains(r.stdout, "COLD-ANSWER") {
		t.Fatalf("keyed prompt that starts a detached owner: %s", r)
	}
	if r := w.run("prompt", id, "--key", "cold", "--linger", "30s", "/say COLD-ANSWER"); r.code != 0 || !strings.Contains(r.stdout, "COLD-ANSWER") || w.received("/say COLD-ANSWER") != 1 {
		t.Fatalf("retry: %s (received %d)", r, w.received("/say COLD-ANSWER"))
	}
}
