package e2e_test

// kandev prompt --steer on the real agents (behind KANDEV_E2E_NPM=1): Codex
// steers; Gemini CLI does not. Claude's case is in claude_acp1_test.go.

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// codex-acp 2.6 steers too (Codex's turn/steer): kandev prompt --steer adds
// the message to Codex's running turn, and the model is shown it there.
func TestCodex_SteerAddsTheMessageToTheRunningTurn(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	id, res := r.start("--agent", "codex", "hello")
	mustOK(t, res)
	r.closeOnCleanup(id)
	turn, busy := r.busyTurnWith(id, codexSlowPrompt)
	n := len(r.requests())
	began := time.Now()
	mustOK(t, r.run("prompt", id, "--steer", "also say the word PINEAPPLE"))
	took := time.Since(began)
	mustOK(t, <-busy)
	evs := r.events(id)
	if st := steered(evs); len(st) != 1 || st[0].TurnID != turn {
		t.Fatalf("steered user messages %+v, want one in turn %s", st, turn)
	}
	if got := lastTurn(evs); got != turn {
		t.Fatalf("the steered message ran as a turn of its own (%s after %s)", got, turn)
	}
	reqs := r.requests()
	if !slices.ContainsFunc(reqs[n:], func(q codexRequest) bool {
		return slices.ContainsFunc(q.userTexts(), func(s string) bool { return strings.Contains(s, "PINEAPPLE") })
	}) {
		t.Fatal("no model request after the steer shows the steered message")
	}
	t.Logf("prompt --steer into Codex's running turn: %s until that turn ended", took.Round(time.Millisecond))
}

// Gemini CLI does not steer (its initialize answer has no steering): a
// --steer prompt queues behind the running turn, says so, and runs next.
func TestGemini_SteerQueuesBehindTheTurnAndSaysSo(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	id, res := r.start("--agent", geminiAgent, "hello")
	mustOK(t, res)
	r.closeOnCleanup(id)
	turn, busy := r.busyTurnWith(id, geminiSlowPrompt)
	steer := r.run("prompt", id, "--steer", "also say the word PINEAPPLE")
	mustOK(t, steer)
	if want := "queued behind the running turn in " + id + ": agent " + geminiAgent + " does not offer steering"; !strings.Contains(steer.stderr, want) {
		t.Fatalf("want %q on stderr: %s", want, steer)
	}
	mustOK(t, <-busy)
	evs := r.events(id)
	if st := steered(evs); len(st) != 0 {
		t.Fatalf("steered %+v into an agent that does not steer", st)
	}
	if next := lastTurn(evs); next == turn {
		t.Fatalf("the --steer prompt did not run as the next turn")
	}
}
