//go:build unix

package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// The two-machine story of sync_test.go on a real agent: each machine runs
// its own adapter against its own fake model server, so what each machine's
// agent was shown is read from that machine's server.

// appendConfig adds toml to the end of w's config.toml (a rig wrote the
// agent's part).
func appendConfig(t *testing.T, w *world, toml string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(w.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\n" + toml)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// sessionLog is the bytes of the session's log on w.
func sessionLog(t *testing.T, w *world, id string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSync_ClaudeSessionStoppedBySIGTERMContinuesOnAnotherMachineOnce: on
// A, Claude is told a codeword, then a slow turn is stopped by SIGTERM after
// its prompt reached A's model; A pushes on the way out ([sync] auto). B
// pulls and resumes: B's Claude has none of A's Claude files, so it is
// restored from the stored history, and the one request it sends (the
// continuation) carries the codeword and the cut prompt. A's own resume
// later takes B's events and sends A's model nothing.
func TestSync_ClaudeSessionStoppedBySIGTERMContinuesOnAnotherMachineOnce(t *testing.T) {
	requireNPMOptIn(t, "claude-agent-acp")
	r := newSyncRig(t, "daemon")
	a, b := newClaudeRigIn(t, r.a), newClaudeRigIn(t, r.b)
	appendConfig(t, a.world, "[sync]\nauto = true\n")

	codeword := fmt.Sprintf("QUOKKA%d", time.Now().UnixNano()%1000000)
	first := "remember the codeword " + codeword
	id, res := a.start("--agent", "claude", first)
	if res.code != 0 {
		t.Fatalf("start on A: %s", res)
	}
	sig := a.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, "prompt", id, claudeSlowPrompt)
	if sig.code != 143 {
		t.Fatalf("SIGTERM on A: exit %d, want 143\n%s", sig.code, sig.result)
	}
	a.assertNoAgentSurvives("A was SIGTERMed")
	evsA := a.events(id)
	cut := lastTurn(evsA)
	if stop := turnEnd(evsA, cut); stop != state.StopShutdown {
		t.Fatalf("A's cut turn %s ended %q, want %s", cut, stop, state.StopShutdown)
	}
	if got := agentText(evsA, cut); strings.Contains(got, "nine ten") {
		t.Fatalf("A's turn was not cut mid-turn: it streamed %q", got)
	}
	reqsA := a.requests()
	if len(reqsA) != 2 || !contains(reqsA[1].userTexts(), claudeSlowPrompt) {
		t.Fatalf("A's model did not get the cut turn's prompt (%d requests)", len(reqsA))
	}
	sentA := len(readRequestLog[claudeRequest](t, a.reqLog, nil))
	logA := sessionLog(t, a.world, id)

	b.mustRun("pull", id)
	if got := sessionLog(t, b.world, id); !bytes.Equal(got, logA) {
		t.Fatalf("B pulled %d bytes of log, A has %d: A's SIGTERM push is not what A holds", len(got), len(logA))
	}
	b.mustRun("resume", id)
	b.assertNoAgentSurvives("B's resume exited")
	evsB := b.events(id)
	assertNoSeqGap(t, evsB)
	if n := continuations(evsB); n != 1 {
		t.Fatalf("B continued the cut turn %d times, want 1\n%s", n, codexDump(evsB[len(evsA):]))
	}
	if starts := codexAgentStarts(evsB[len(evsA):]); len(starts) != 1 || starts[0].Restore != "new" {
		t.Fatalf("B's agent_started: %+v (want one new Claude session: A's is not on B)", starts)
	}
	reqsB := b.requests()
	if len(reqsB) != 1 {
		t.Fatalf("B's model got %d requests for the continuation, want 1", len(reqsB))
	}
	shown := reqsB[0].input()
	for _, want := range []string{codeword, claudeSlowPrompt, "ack 1: " + first} {
		if !strings.Contains(shown, want) {
			t.Fatalf("B's agent does not know what A's was told: %q is missing from its request:\n%s", want, shown)
		}
	}
	if s := b.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("B's record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}
	// B gave its claim up and pushed the continuation as it ended.
	if out := b.mustRun("push", id).stdout; !strings.Contains(out, "up to date") {
		t.Fatalf("B's resume did not push what it added: %s", out)
	}
	logB := sessionLog(t, b.world, id)

	// A's resume takes B's events first: nothing is left to continue. It
	// restores the agent (B's Claude session is not on A either) and runs
	// no turn.
	a.mustRun("resume", id)
	got := sessionLog(t, a.world, id)
	if !bytes.HasPrefix(got, logB) {
		t.Fatalf("A's log after its resume does not start with B's (%d bytes, B %d)", len(got), len(logB))
	}
	for _, e := range a.events(id)[len(evsB):] {
		if e.TurnID != "" || e.Type == state.EventTurnStarted {
			t.Fatalf("A's resume added to a turn: %d %s turn %q\n%s", e.Seq, e.Type, e.TurnID, codexDump(a.events(id)[len(evsB):]))
		}
	}
	if n := len(readRequestLog[claudeRequest](t, a.reqLog, nil)); n != sentA {
		t.Fatalf("A's resume sent A's model %d requests, want none", n-sentA)
	}
	a.assertNoAgentSurvives("A's resume exited")
	// What A's resume recorded travelled: B takes it by fast-forward.
	b.mustRun("pull", id)
	if !bytes.Equal(sessionLog(t, b.world, id), sessionLog(t, a.world, id)) {
		t.Fatal("B's log after pulling A's resume differs from A's")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
