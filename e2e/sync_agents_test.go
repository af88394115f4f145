//go:build unix

package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// The two-machine story of sync_test.go on real agents: each machine runs
// its own adapter, with its own agent store, against its own fake model
// server, so what each machine's agent was shown is read from that
// machine's server.

// agentMachine is one machine of a sync rig whose agent is a real adapter.
type agentMachine struct {
	*world
	requests func() []modelRequest // the agent loop's model requests, in order
	sent     func() int            // every request the machine's fake server got
	noAgent  func(after string)    // waits for the machine's agent processes to be gone
}

// realAgent is an adapter the story runs on.
type realAgent struct {
	name    string // the kandev agent
	npm     string // what requireNPMOptIn names
	slow    string // a prompt whose answer streams for several seconds
	machine func(t *testing.T, w *world) agentMachine
}

var syncAgents = []realAgent{
	{name: "claude", npm: "claude-agent-acp", slow: claudeSlowPrompt, machine: claudeMachine},
	{name: "codex", npm: "codex-acp", slow: codexSlowPrompt, machine: codexMachine},
}

func claudeMachine(t *testing.T, w *world) agentMachine {
	r := newClaudeRigIn(t, w)
	return agentMachine{world: w, noAgent: r.assertNoAgentSurvives,
		requests: r.Requests,
		sent:     func() int { return len(readRequestLog[claudeRequest](t, r.reqLog, nil)) },
	}
}

func codexMachine(t *testing.T, w *world) agentMachine {
	r := newCodexRig(t, codexOptions{world: w})
	return agentMachine{world: w, noAgent: r.assertNoAgentSurvives,
		requests: r.Requests,
		sent:     func() int { return len(r.requests()) },
	}
}

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

// TestSync_ARealAgentStoppedBySIGTERMContinuesOnAnotherMachineOnce: on A,
// the agent is told a codeword, then a slow turn is stopped by SIGTERM after
// its prompt reached A's model; A pushes on the way out ([sync] auto). B
// pulls and resumes: B's agent has none of A's agent files, so it is
// restored from the stored history, and the one request it sends (the
// continuation) carries the codeword and the cut prompt. A's own resume
// later takes B's events, runs no turn and sends A's model nothing.
func TestSync_ARealAgentStoppedBySIGTERMContinuesOnAnotherMachineOnce(t *testing.T) {
	t.Parallel()
	for _, ag := range syncAgents {
		t.Run(ag.name, func(t *testing.T) {
			requireNPMOptIn(t, ag.npm)
			r := newSyncRig(t, "daemon")
			a, b := ag.machine(t, r.a), ag.machine(t, r.b)
			appendConfig(t, a.world, "[sync]\nauto = true\n")
			twoMachinesOnARealAgent(t, ag, a, b)
		})
	}
}

func twoMachinesOnARealAgent(t *testing.T, ag realAgent, a, b agentMachine) {
	codeword := fmt.Sprintf("QUOKKA%d", time.Now().UnixNano()%1000000)
	first := "remember the codeword " + codeword
	id := a.mustStart("--agent", ag.name, first)
	sig := a.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, "prompt", id, ag.slow)
	if sig.code != 143 {
		t.Fatalf("SIGTERM on A: exit %d, want 143\n%s", sig.code, sig.result)
	}
	a.noAgent("A was SIGTERMed")
	evsA := a.events(id)
	cut := lastTurn(evsA)
	if stop := turnEnd(evsA, cut); stop != eventlog.StopShutdown {
		t.Fatalf("A's cut turn %s ended %q, want %s", cut, stop, eventlog.StopShutdown)
	}
	if got := agentText(evsA, cut); strings.Contains(got, "nine ten") {
		t.Fatalf("A's turn was not cut mid-turn: it streamed %q", got)
	}
	if reqs := a.requests(); len(reqs) != 2 || !slices.Contains(reqs[1].Users, ag.slow) {
		t.Fatalf("A's model did not get the cut turn's prompt (%d requests: %+v)", len(reqs), reqs)
	}
	sentA := a.sent()
	logA := sessionLog(t, a.world, id)

	b.mustRun("pull", id)
	if got := sessionLog(t, b.world, id); !bytes.Equal(got, logA) {
		t.Fatalf("B pulled %d bytes of log, A has %d: A's SIGTERM push is not what A holds", len(got), len(logA))
	}
	b.mustRun("resume", id)
	b.noAgent("B's resume exited")
	evsB := b.events(id)
	assertNoSeqGap(t, evsB)
	if n := continuations(evsB); n != 1 {
		t.Fatalf("B continued the cut turn %d times, want 1\n%s", n, codexDump(evsB[len(evsA):]))
	}
	if starts := codexAgentStarts(evsB[len(evsA):]); len(starts) != 1 || starts[0].Restore != "new" {
		t.Fatalf("B's agent_started: %+v (want one new agent session: A's is not on B)", starts)
	}
	reqsB := b.requests()
	if len(reqsB) != 1 {
		t.Fatalf("B's model got %d requests for the continuation, want 1", len(reqsB))
	}
	for _, want := range []string{codeword, ag.slow, "ack 1: " + first} {
		if !strings.Contains(reqsB[0].Input, want) {
			t.Fatalf("B's agent does not know what A's was told: %q is missing from its request:\n%s", want, reqsB[0].Input)
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
	// restores the agent (B's agent session is not on A either) and runs
	// no turn.
	a.mustRun("resume", id)
	got := sessionLog(t, a.world, id)
	if !bytes.HasPrefix(got, logB) {
		t.Fatalf("A's log after its resume does not start with B's (%d bytes, B %d)", len(got), len(logB))
	}
	for _, e := range a.events(id)[len(evsB):] {
		if e.TurnID != "" || e.Type == eventlog.EventTurnStarted {
			t.Fatalf("A's resume added to a turn: %d %s turn %q\n%s", e.Seq, e.Type, e.TurnID, codexDump(a.events(id)[len(evsB):]))
		}
	}
	if n := a.sent(); n != sentA {
		t.Fatalf("A's resume sent A's model %d requests, want none", n-sentA)
	}
	a.noAgent("A's resume exited")
	// What A's resume recorded travelled: B takes it by fast-forward.
	b.mustRun("pull", id)
	if !bytes.Equal(sessionLog(t, b.world, id), sessionLog(t, a.world, id)) {
		t.Fatal("B's log after pulling A's resume differs from A's")
	}
}
