package e2e_test

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// sleepingTurn streams a word, sleeps, then streams "after": a signal sent
// once "working" is in the log lands mid-turn.
const sleepingTurn = "/say working\n/sleep 3000\n/say after"

// signalled is a kandev command that received signals mid-turn.
type signalled struct {
	result
	took time.Duration // from the first signal to the exit
}

// signalMidTurn runs kandev args in the background, waits until session id
// has streamed an agent message in a new turn, then sends sigs (a short
// pause between them, after before the first one runs) and waits for the exit.
func (w *world) signalMidTurn(id string, before func(), sigs []syscall.Signal, args ...string) signalled {
	w.t.Helper()
	turns := len(ofType(w.events(id), eventlog.EventTurnStarted))
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	// A real agent restored in a new process streams within minutes on a
	// loaded machine (Claude's adapter missed 30 s in CI).
	waitFor(w.t, 2*time.Minute, "the turn to stream", func() bool {
		evs := w.eventsSoFar(id)
		return len(ofType(evs, eventlog.EventTurnStarted)) > turns && agentText(evs, lastTurn(evs)) != ""
	})
	if before != nil {
		before()
	}
	began := time.Now()
	for i, sig := range sigs {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
	}
	err := cmd.Wait()
	took := time.Since(began)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return signalled{result{out.String(), errb.String(), code}, took}
}

func turnEnd(evs []eventlog.Event, turn string) string {
	for _, e := range evs {
		if e.Type == eventlog.EventTurnEnded && e.TurnID == turn {
			return e.StopReason
		}
	}
	return ""
}

func TestSignals_CtrlCCancelsTheTurnExits130AndIsNeverContinued(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGINT}, "prompt", id, sleepingTurn)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%s", r.code, r.result)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopCancelled {
		t.Fatalf("turn ended %q, want cancelled", stop)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle || st.Status.Interrupted {
		t.Fatalf("status after Ctrl-C: %+v", st.Status)
	}
	w.mustRun("resume", id)
	if after := w.events(id); continuations(after) != 0 || lastTurn(after) != lastTurn(evs) {
		t.Fatalf("a cancelled turn was continued: last turn %s", lastTurn(after))
	}
}

func TestSignals_SIGTERMExits143AndTheNextResumeContinuesTheTurnOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, "prompt", id, sleepingTurn)
	if r.code != 143 {
		t.Fatalf("exit %d, want 143\n%s", r.code, r.result)
	}
	if r.took > 10*time.Second {
		t.Fatalf("SIGTERM took %s to end the command", r.took)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "kandev: "); n != 1 || !strings.Contains(r.stderr, "kandev resume "+id) {
		t.Fatalf("want one error line naming the next command:\n%s", r.stderr)
	}
	evs := w.events(id)
	cut := lastTurn(evs)
	if stop := turnEnd(evs, cut); stop != eventlog.StopShutdown {
		t.Fatalf("turn ended %q, want shutdown", stop)
	}
	if st := w.status(id); !st.Status.NeedsResume || st.Status.Badge != verdict.BadgeNeedsResume || !st.Status.Interrupted {
		t.Fatalf("status after SIGTERM: %+v", st.Status)
	}
	w.mustRun("resume", id)
	after := w.events(id)
	assertNoSeqGap(t, after)
	if continuations(after) != 1 || len(ofType(after, eventlog.EventTurnEnded)) != len(ofType(after, eventlog.EventTurnStarted)) {
		t.Fatalf("want one continuation of %s, got %d", cut, continuations(after))
	}
	if n := strings.Count(agentText(after, cut), "after"); n != 0 {
		t.Fatalf("the cut turn went on after SIGTERM")
	}
	w.mustRun("resume", id)
	if again := w.events(id); len(ofType(again, eventlog.EventTurnStarted)) != len(ofType(after, eventlog.EventTurnStarted)) {
		t.Fatal("a second resume added a turn")
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle {
		t.Fatalf("status after the continuation: %+v", st.Status)
	}
}

func TestSignals_SIGHUPLetsTheTurnRunToItsEndWithNothingToResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGHUP}, "prompt", id, sleepingTurn)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.result)
	}
	evs := w.events(id)
	turn := lastTurn(evs)
	if stop := turnEnd(evs, turn); stop != eventlog.StopEndTurn || !strings.Contains(agentText(evs, turn), "after") {
		t.Fatalf("turn ended %q with %q, want end_turn with the text after the sleep", stop, agentText(evs, turn))
	}
	if strings.Contains(r.stdout, "after") {
		t.Fatalf("wrote to the terminal after it hung up:\n%s", r.stdout)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle || st.Status.Interrupted {
		t.Fatalf("status after SIGHUP: %+v", st.Status)
	}
	w.mustRun("resume", id)
	if continuations(w.events(id)) != 0 {
		t.Fatal("a finished turn was continued")
	}
}

func TestSignals_SecondSIGTERMDuringTheGraceKillsTheAgentAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agent]\ncancel_grace_seconds = 60\n")
	id, _ := w.start()
	var agent *state.Session
	// A stopped agent cannot answer session/cancel: only the second signal ends the wait.
	stopAgent := func() {
		agent = w.session(id)
		stopGroup(agent.AgentPID) // the agent's process group, its supervisor included
	}
	r := w.signalMidTurn(id, stopAgent, []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, "prompt", id, sleepingTurn)
	if r.code != 143 {
		t.Fatalf("exit %d, want 143\n%s", r.code, r.result)
	}
	if r.took > 20*time.Second {
		t.Fatalf("the second SIGTERM did not stop at once: %s", r.took)
	}
	if proc.ProcessAlive(agent.AgentPID, agent.AgentStart) {
		t.Fatalf("agent %d survived", agent.AgentPID)
	}
	evs := w.events(id)
	cut := lastTurn(evs)
	if stop := turnEnd(evs, cut); stop != "" {
		t.Fatalf("turn ended %q; want it left for repair", stop)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeNeedsResume {
		t.Fatalf("status: %+v", st.Status)
	}
	w.mustRun("resume", id)
	after := w.events(id)
	if turnEnd(after, cut) != eventlog.StopShutdown || continuations(after) != 1 {
		t.Fatalf("resume: turn %s ended %q, %d continuations", cut, turnEnd(after, cut), continuations(after))
	}
}

func TestSignals_SIGTERMDuringRecoverLeavesItsTurnForTheNextRecover(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("--linger", "0")
	// Killed before the prompt was sent (at the failpoint): recover sends
	// the message again, and that turn sleeps long enough for the SIGTERM
	// to land in it.
	env := w.env
	w.env = append(append([]string{}, env...), failAt...)
	// --linger 0: the failpoint is in the prompt's own owner, not in a warm one.
	w.killAt(func(e eventlog.Event) bool { return e.Type == eventlog.EventState && e.State == state.StateRunning },
		10*time.Second, "prompt", "--linger", "0", id, "/sleep 4000\n/say done")
	w.env = env
	before := len(ofType(w.events(id), eventlog.EventTurnStarted))
	cmd, _ := w.background("recover", "--all")
	waitFor(t, 30*time.Second, "recover's turn", func() bool {
		return len(ofType(w.eventsSoFar(id), eventlog.EventTurnStarted)) > before && w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("recover: %v, want exit 143", err)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopShutdown {
		t.Fatalf("recover's turn ended %q, want shutdown", stop)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeNeedsResume {
		t.Fatalf("status: %+v", st.Status)
	}
	w.mustRun("recover", "--all")
	after := w.events(id)
	// The re-sent message had reached the agent: the next recover continues
	// it once, quoting it.
	conts := userMessages(after, eventlog.SourceContinuation)
	if last := lastTurn(after); turnEnd(after, last) != eventlog.StopEndTurn || len(conts) != 1 || !strings.Contains(conts[0], "> /sleep 4000") {
		t.Fatalf("the next recover did not continue the work: %s ended %q, continuations %q", last, turnEnd(after, last), conts)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle {
		t.Fatalf("status after recover: %+v", st.Status)
	}
}
