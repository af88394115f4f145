package e2e_test

// The usage limit answers of real agents, driven offline: each fake model
// server answers the vendor's own 429 (body and headers) for a turn whose
// text contains limitWord (-limit-word), and the real adapter passes it on
// the way it does. kandev must end the turn rate_limited, exit 8.

import (
	"testing"
	"time"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

const limitWord = "OVERQUOTA"

// assertRateLimited checks the turn of res ended as a usage limit should.
func assertRateLimited(t *testing.T, w *world, id string, res result, wantReset time.Time) {
	t.Helper()
	if res.code != 8 {
		t.Fatalf("want exit 8 (rate limited): %s", res)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, lastTurn(evs)); stop != state.StopRateLimited {
		t.Fatalf("turn ended %q, want rate_limited", stop)
	}
	m, reset := limitMarker(t, evs)
	t.Logf("the agent said: %s; reset %v", m.Diagnostic, reset)
	if !wantReset.IsZero() && (reset.Before(wantReset.Add(-90*time.Second)) || reset.After(wantReset.Add(90*time.Second))) {
		t.Fatalf("reset %v, want about %v (agent said %q)", reset, wantReset, m.Diagnostic)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeWaitingForLimit {
		t.Fatalf("badge %q", st.Status.Badge)
	}
}

func TestLimit_ClaudesUsageLimitAnswerEndsTheTurnRateLimited(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t, "-limit-word", limitWord, "-limit-reset", "2h")
	id, res := r.start("--agent", "claude", "--linger", "0", "remember PAPAYA")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	res = r.run("prompt", id, "--linger", "0", limitWord+" please go on")
	assertRateLimited(t, r.world, id, res, time.Time{})
	r.assertNoAgentSurvives("the rate-limited prompt exited")
}

func TestLimit_CodexUsageLimitAnswerEndsTheTurnRateLimitedWithItsReset(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{fakeArgs: []string{"-limit-word", limitWord, "-limit-reset", "2h"}})
	id, res := r.start("--agent", "codex", "--linger", "0", "remember PAPAYA")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	res = r.run("prompt", id, "--linger", "0", limitWord+" please go on")
	assertRateLimited(t, r.world, id, res, time.Now().Add(2*time.Hour))
	r.assertNoAgentSurvives("the rate-limited prompt exited")
}

func TestLimit_GeminiQuotaAnswerEndsTheTurnRateLimited(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t, "-limit-word", limitWord, "-limit-reset", "45s")
	id, res := r.start("--agent", geminiAgent, "--linger", "0", "remember PAPAYA")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	res = r.run("prompt", id, "--linger", "0", limitWord+" please go on")
	assertRateLimited(t, r.world, id, res, time.Time{})
	r.assertNoAgentSurvives("the rate-limited prompt exited")
}

// The OpenAI-compatible chat answer (429 rate_limit_exceeded with
// retry-after and x-ratelimit reset headers) as Copilot and OpenCode pass it on.
func chatAgentRateLimited(t *testing.T, r *chatAgent) {
	t.Helper()
	id, res := r.start("--agent", r.name, "--linger", "0", "first fast turn about apples")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	res = r.run("prompt", id, "--linger", "0", limitWord+" please go on")
	assertRateLimited(t, r.world, id, res, time.Time{})
	r.assertNoAgentSurvives(id, "the rate-limited prompt exited")
}

func TestLimit_OpenCodesRateLimitAnswerEndsTheTurnRateLimited(t *testing.T) {
	t.Parallel()
	chatAgentRateLimited(t, newOpenCodeRig(t, "-limit-word", limitWord, "-limit-reset", "1s").chatAgent)
}

func TestLimit_CopilotsRateLimitAnswerEndsTheTurnRateLimited(t *testing.T) {
	t.Parallel()
	chatAgentRateLimited(t, newCopilotRig(t, "-limit-word", limitWord, "-limit-reset", "1s").chatAgent)
}
