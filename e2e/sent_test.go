package e2e_test

import (
	"bytes"
	"encoding/json"
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

// silentTurn is a first prompt the demo agent works on for 20 s without
// streaming anything.
const silentTurn = "/sleep 20000"

// received counts the prompts the demo agent of w's home received with
// exactly text, in every agent session it holds: it saves each prompt
// before it starts working on it.
func (w *world) received(text string) int {
	w.t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.home, "demo-agent", "*.json"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			w.t.Fatal(err)
		}
		var sf struct {
			Entries []struct{ Role, Text string }
		}
		if err := json.Unmarshal(b, &sf); err != nil {
			w.t.Fatalf("demo agent session %s: %v", f, err)
		}
		for _, e := range sf.Entries {
			if e.Role == "user" && e.Text == text {
				n++
			}
		}
	}
	return n
}

// background is a kandev command running while the test acts on it.
type background struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

// launch starts kandev args with extra environment variables.
func (w *world) launch(extraEnv []string, args ...string) *background {
	w.t.Helper()
	b := &background{cmd: exec.Command(kandevBin, args...)}
	b.cmd.Dir, b.cmd.Env = w.cwd, append(append([]string{}, w.env...), extraEnv...)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { b.cmd.Process.Kill(); b.cmd.Wait() })
	return b
}

// stop sends sig and waits for the exit (20 s at most).
func (b *background) stop(t *testing.T, sig syscall.Signal) result {
	t.Helper()
	b.cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("kandev did not exit within 20 s of %s\n%s", sig, b.err.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	return result{b.out.String(), b.err.String(), code}
}

// onlySession is the id of the one session in w's home.
func (w *world) onlySession() string {
	w.t.Helper()
	h, _ := state.OpenHome(w.home)
	all, _ := h.ListSessions()
	if len(all) != 1 {
		w.t.Fatalf("%d sessions, want 1", len(all))
	}
	return all[0].ID
}

// startSilentAndWaitUntilTheAgentHasIt starts the silent first prompt and
// returns once the agent has begun working on it.
func (w *world) startSilentAndWaitUntilTheAgentHasIt(agent string) (*background, string) {
	w.t.Helper()
	b := w.launch(nil, "start", "--agent", agent, "--linger", "0", silentTurn)
	waitFor(w.t, 30*time.Second, "the agent to receive the prompt", func() bool { return w.received(silentTurn) == 1 })
	id := w.onlySession()
	if len(ofType(w.events(id), eventlog.EventPromptSent)) != 1 {
		w.t.Fatalf("the agent has the prompt but the log has no prompt_sent")
	}
	return b, id
}

// userMessages are the user messages of turns started with source.
func userMessages(evs []eventlog.Event, source string) []string {
	turns := map[string]bool{}
	var out []string
	for _, e := range evs {
		switch {
		case e.Type == eventlog.EventTurnStarted && e.Source == source:
			turns[e.TurnID] = true
		case e.Type == eventlog.EventUserMessage && turns[e.TurnID]:
			out = append(out, e.Content)
		}
	}
	return out
}

func sentWorld(t *testing.T) *world {
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config(`
[agents.loads]
command = ["` + kandevBin + `", "demo-agent", "--no-resume"]
`)
	return w
}

func TestSent_ASilentTurnCutOffBySIGTERMOrSIGKILLIsContinuedOnceQuotingTheRequest(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := sentWorld(t)
			b, id := w.startSilentAndWaitUntilTheAgentHasIt("demo")
			r := b.stop(t, sig)
			if want := 128 + int(sig); r.code != want {
				t.Fatalf("exit %d, want %d\n%s", r.code, want, r)
			}
			if strings.Contains(r.stderr, "not be sent") {
				t.Fatalf("a sent prompt reported as not sent:\n%s", r.stderr)
			}
			if st := w.status(id); st.Status.Badge != verdict.BadgeNeedsResume {
				t.Fatalf("status after %s: %+v", sig, st.Status)
			}
			began := time.Now()
			w.mustRun("resume", id, "--linger", "0")
			if took := time.Since(began); took > 15*time.Second {
				t.Fatalf("resume took %s: the 20 s turn ran again", took)
			}
			w.mustRun("resume", id, "--linger", "0")
			evs := w.events(id)
			assertNoSeqGap(t, evs)
			if n := w.received(silentTurn); n != 1 {
				t.Fatalf("the agent received the prompt %d times, want 1", n)
			}
			if n := len(userMessages(evs, eventlog.SourceInitial)); n != 1 {
				t.Fatalf("%d turns sent the first prompt, want 1", n)
			}
			conts := userMessages(evs, eventlog.SourceContinuation)
			if len(conts) != 1 || !strings.Contains(conts[0], "> "+silentTurn) || !strings.Contains(conts[0], "check what you already did") {
				t.Fatalf("continuations: %q; want one that quotes the request", conts)
			}
		})
	}
}

func TestSent_AContinuationAfterALoadThatReplayedTheRequestDoesNotQuoteIt(t *testing.T) {
	t.Parallel()
	w := sentWorld(t)
	b, id := w.startSilentAndWaitUntilTheAgentHasIt("loads")
	if r := b.stop(t, syscall.SIGTERM); r.code != 143 {
		t.Fatal(r)
	}
	w.mustRun("resume", id, "--linger", "0")
	evs := w.events(id)
	if started := ofType(evs, eventlog.EventAgentStarted); started[len(started)-1].Restore != "load" {
		t.Fatalf("restored by %q, want load", started[len(started)-1].Restore)
	}
	conts := userMessages(evs, eventlog.SourceContinuation)
	if len(conts) != 1 || strings.Contains(conts[0], silentTurn) || !strings.Contains(conts[0], "interrupted") {
		t.Fatalf("continuations: %q; want one that does not quote what the agent replayed", conts)
	}
	if n := w.received(silentTurn); n != 1 {
		t.Fatalf("the agent received the prompt %d times, want 1", n)
	}
}

func TestSent_CtrlCOnASilentSentTurnIsAPlainCancel(t *testing.T) {
	t.Parallel()
	w := sentWorld(t)
	b, id := w.startSilentAndWaitUntilTheAgentHasIt("demo")
	r := b.stop(t, syscall.SIGINT)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%s", r.code, r)
	}
	evs := w.events(id)
	if strings.Contains(r.stderr+r.stdout, "not be sent") || hasMarker(evs, "prompt_cancel", "not be sent") {
		t.Fatalf("a sent prompt reported as not sent:\n%s", r)
	}
	if stop := turnEnd(evs, "t1"); stop != eventlog.StopCancelled {
		t.Fatalf("turn t1 ended %q, want cancelled", stop)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle || st.Status.NeedsResume && st.Status.Interrupted {
		t.Fatalf("status after Ctrl-C: %+v", st.Status)
	}
	w.mustRun("resume", id, "--linger", "0")
	after := w.events(id)
	if len(ofType(after, eventlog.EventTurnStarted)) != 1 || w.received(silentTurn) != 1 {
		t.Fatalf("a cancelled turn was sent again or continued: %d turns, received %d times", len(ofType(after, eventlog.EventTurnStarted)), w.received(silentTurn))
	}
}

// failAt is the environment that stops a kandev owner just before it
// records prompt_sent and writes the prompt.
var failAt = []string{"KANDEV_FAILPOINT=before-prompt-sent"}

func TestSent_ATurnKilledBeforePromptSentIsSentExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := sentWorld(t)
			b := w.launch(failAt, "start", "--linger", "0", "remember FIG")
			waitFor(t, 30*time.Second, "the first turn to start", func() bool {
				h, _ := state.OpenHome(w.home)
				all, _ := h.ListSessions()
				return len(all) == 1 && lastTurn(w.eventsSoFar(all[0].ID)) == "t1"
			})
			r := b.stop(t, sig)
			id := w.onlySession()
			if want := 128 + int(sig); r.code != want {
				t.Fatalf("exit %d, want %d\n%s", r.code, want, r)
			}
			if len(ofType(w.events(id), eventlog.EventPromptSent)) != 0 || w.received("remember FIG") != 0 {
				t.Fatal("the prompt was sent before the failpoint")
			}
			w.mustRun("resume", id, "--linger", "0")
			w.mustRun("resume", id, "--linger", "0")
			evs := w.events(id)
			if n := w.received("remember FIG"); n != 1 {
				t.Fatalf("the agent received the prompt %d times, want 1", n)
			}
			if continuations(evs) != 0 || len(ofType(evs, eventlog.EventPromptSent)) != 1 {
				t.Fatalf("want the unsent prompt sent once and nothing continued: %d continuations, %d prompt_sent", continuations(evs), len(ofType(evs, eventlog.EventPromptSent)))
			}
			if got := w.mustRun("prompt", id, "--linger", "0", "recall").stdout; !strings.Contains(got, "FIG") {
				t.Fatalf("recall after the re-send: %q", got)
			}
		})
	}
}

func TestSent_AFirstPromptTheAgentDiesOnIsNeverSentAgain(t *testing.T) {
	t.Parallel()
	w := sentWorld(t)
	// The demo agent exits on /crash, mid-turn, after taking the prompt. (A
	// prompt too large for the agent's reader was the poison here; kandev now
	// refuses a prompt over 1 MiB before any agent sees it.)
	const poison = "remember PLUM\n/crash"
	r := w.runInput(poison, "start", "--linger", "0", "-")
	if r.code != 6 {
		t.Fatalf("start with a prompt the agent dies on: %s", r)
	}
	id := w.onlySession()
	for i := 0; i < 2; i++ {
		if got := w.mustRun("prompt", id, "--linger", "0", "remember KIWI").stdout; !strings.Contains(got, "remember KIWI") {
			t.Fatalf("prompt %d after the poison prompt answered %q", i, got)
		}
	}
	evs := w.events(id)
	if n := len(userMessages(evs, eventlog.SourceInitial)); n != 1 || continuations(evs) != 0 {
		t.Fatalf("%d initial turns and %d continuations, want 1 and 0", n, continuations(evs))
	}
	if n := w.received(poison); n > 1 {
		t.Fatalf("the agent received the poison prompt %d times: it was sent again", n)
	}
}

func TestSent_ResendsOfAnUnsentPromptSpendTheBudgetAndClearEndsThem(t *testing.T) {
	t.Parallel()
	w := sentWorld(t)
	w.config("[session.restart]\nmax_attempts = 3\nwindow_seconds = 300\n")
	cut := func(turns int, args ...string) result {
		t.Helper()
		b := w.launch(failAt, args...)
		waitFor(t, 30*time.Second, "the turn to start", func() bool {
			h, _ := state.OpenHome(w.home)
			all, _ := h.ListSessions()
			if len(all) != 1 {
				return false
			}
			// The record is written before the log's first line: a log that
			// does not exist yet is a turn that has not started.
			return len(ofType(w.eventsSoFar(all[0].ID), eventlog.EventTurnStarted)) == turns
		})
		return b.stop(t, syscall.SIGKILL)
	}
	cut(1, "start", "--linger", "0", "remember FIG")
	id := w.onlySession()
	for i := 1; i <= 3; i++ {
		cut(1+i, "resume", id, "--linger", "0")
	}
	// The first send and three re-sends, all cut before the prompt went out:
	// the fourth re-send would exceed the budget.
	r := w.run("resume", id, "--linger", "0")
	if r.code != 5 || !strings.Contains(r.stderr, "budget") {
		t.Fatalf("fourth re-send: %s", r)
	}
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != 4 {
		t.Fatalf("%d turns, want 4", n)
	}
	w.mustRun("clear", id)
	if got := w.mustRun("prompt", id, "--linger", "0", "recall").stdout; !strings.Contains(got, "I remember nothing") {
		t.Fatalf("recall after clear: %q", got)
	}
	evs := w.events(id)
	if last := userMessages(evs, eventlog.SourceUser); len(last) == 0 || last[len(last)-1] != "recall" || w.received("remember FIG") != 0 {
		t.Fatalf("after clear the next prompt is not the user's own: %q, FIG received %d times", last, w.received("remember FIG"))
	}
	if continuations(evs) != 0 {
		t.Fatalf("%d continuations", continuations(evs))
	}
}

func TestSent_ClearEndsAPendingFirstPromptSoTheNextPromptIsTheUsersOwn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		args []string
		cut  func(w *world) bool // when to SIGKILL the start
	}{
		{"cut before prompt_sent", failAt, []string{"start", "--linger", "0", "remember FIG"}, func(w *world) bool {
			h, _ := state.OpenHome(w.home)
			all, _ := h.ListSessions()
			return len(all) == 1 && lastTurn(w.eventsSoFar(all[0].ID)) == "t1"
		}},
		{"cut during the agent's launch", nil, []string{"start", "--agent", "slowstart", "--linger", "0", "remember FIG"}, func(w *world) bool {
			h, _ := state.OpenHome(w.home)
			all, _ := h.ListSessions()
			return len(all) == 1 && all[0].AgentLaunched
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := sentWorld(t)
			slowStart := writeScript(t, "slow-start", "sleep 3\nexec "+kandevBin+" demo-agent\n")
			w.config("[agents.slowstart]\ncommand = [\"" + slowStart + "\"]\n")
			b := w.launch(tc.env, tc.args...)
			waitFor(t, 30*time.Second, "the point to cut", func() bool { return tc.cut(w) })
			b.stop(t, syscall.SIGKILL)
			id := w.onlySession()
			if st := w.status(id); st.Status.Badge != verdict.BadgeNeedsResume {
				t.Fatalf("before clear: %+v", st.Status)
			}
			w.mustRun("clear", id)
			if got := w.mustRun("prompt", id, "--linger", "0", "recall").stdout; !strings.Contains(got, "I remember nothing") {
				t.Fatalf("recall after clear: %q", got)
			}
			evs := w.events(id)
			if w.received("remember FIG") != 0 || continuations(evs) != 0 || len(userMessages(evs, eventlog.SourceInitial)) > 1 {
				t.Fatalf("the first prompt was sent after clear (received %d times)", w.received("remember FIG"))
			}
		})
	}
}
