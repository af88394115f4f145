package e2e_test

// Claude's current adapter offers its setup only as config options (the
// model, effort as thought_level, fast as a boolean) and names sessions
// itself (session_info_update, from a title it asks the model for): what
// kandev is given with --model, --set and --title reaches the model's
// requests and the session, offline against testdata/fakemodel -format messages.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// loopSince are the agent loop's model requests after the first n.
func (r *claudeRig) loopSince(n int) []claudeRequest {
	r.t.Helper()
	reqs := r.requests()
	if len(reqs) <= n {
		r.t.Fatalf("no model request after the first %d", n)
	}
	return reqs[n:]
}

func TestClaude_ModelEffortAndFastOptionsReachTheModelRequest(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	r.underCI() // kandev set is made while no owner runs, then applied by the restore in a new command
	id, res := r.start("--agent", "claude", "--model", "opus", "--set", "effort=high", "--set", "fast=on", "hello with options")
	mustOK(t, res)
	for _, m := range ofType(r.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" {
			t.Fatalf("Claude did not take what it offers: %s", m.Summary)
		}
	}
	for i, q := range r.loopSince(0) {
		if !strings.Contains(q.Body.Model, "opus") || q.Body.OutputConfig.Effort != "high" || q.Body.Speed != "fast" || !strings.Contains(q.Beta, "fast-mode") {
			t.Fatalf("request %d: model %q, effort %q, speed %q, beta %q; want opus, high, fast", i+1, q.Body.Model, q.Body.OutputConfig.Effort, q.Body.Speed, q.Beta)
		}
	}
	var st setupStatus
	decodeJSON(t, r.mustRun("--json", "status", id).stdout, &st)
	if s := st.Session.Setup; s.Model != "opus" || s.Options["effort"] != "high" || s.Options["fast"] != "on" && s.Options["fast"] != "true" {
		t.Fatalf("status shows %+v", s)
	}

	// Changed with kandev set while no owner runs: the restore in a new
	// process applies it before the next turn.
	n := len(r.requests())
	mustOK(t, r.run("set", id, "--model", "sonnet", "--set", "effort=low", "--set", "fast=off"))
	mustOK(t, r.run("prompt", id, "hello again"))
	for i, q := range r.loopSince(n) {
		if !strings.Contains(q.Body.Model, "sonnet") || q.Body.OutputConfig.Effort != "low" || q.Body.Speed == "fast" {
			t.Fatalf("after kandev set, request %d: model %q, effort %q, speed %q; want sonnet, low, not fast", i+1, q.Body.Model, q.Body.OutputConfig.Effort, q.Body.Speed)
		}
	}
	if starts := ofType(r.events(id), eventlog.EventAgentStarted); len(starts) != 2 {
		t.Fatalf("agent starts: %+v", starts)
	}
}

func TestClaude_ItsTitleNamesTheSessionUnlessThePersonGaveOne(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t, "-title", "Login bug triage")
	// Claude Code asks its model for the title beside the turn and may send
	// it after the turn has ended: the default's warm owner is there to
	// record it (an owner that ends with the turn, as under CI, may not be).
	id, res := r.start("--agent", "claude", "please help me fix the login bug")
	mustOK(t, res)
	waitFor(t, 20*time.Second, "Claude's title to name the session", func() bool { return r.titleOf(id) == "Login bug triage" })

	named, res := r.start("--agent", "claude", "--title", "my own name", "please look at the signup page too")
	mustOK(t, res)
	// The agent sent its title for this session too; the person's stays.
	waitFor(t, 20*time.Second, "Claude's title update for the named session", func() bool {
		return slices.ContainsFunc(ofType(r.events(named), eventlog.EventAgentUpdate), func(e eventlog.Event) bool {
			return strings.Contains(string(e.Data), "session_info_update") && strings.Contains(string(e.Data), "Login bug triage")
		})
	})
	if got := r.titleOf(named); got != "my own name" {
		t.Fatalf("Claude's title replaced the one given with --title: %q", got)
	}
}

func TestClaude_SteerAddsTheMessageToTheRunningTurn(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	id, res := r.start("--agent", "claude", "hello")
	mustOK(t, res)
	r.closeOnCleanup(id)
	turn, busy := r.busyTurnWith(id, claudeSlowPrompt)
	n := len(r.requests())
	began := time.Now()
	steer := r.run("prompt", id, "--steer", "also say the word PINEAPPLE")
	took := time.Since(began)
	mustOK(t, steer)
	mustOK(t, <-busy)
	evs := r.events(id)
	st := steered(evs)
	if len(st) != 1 || st[0].TurnID != turn {
		t.Fatalf("steered user messages %+v, want one in turn %s", st, turn)
	}
	if got := lastTurn(evs); got != turn {
		t.Fatalf("the steered message ran as a turn of its own (%s after %s)", got, turn)
	}
	shown := slices.ContainsFunc(r.loopSince(n), func(q claudeRequest) bool {
		return slices.ContainsFunc(q.userTexts(), func(s string) bool { return strings.Contains(s, "PINEAPPLE") })
	})
	if !shown {
		t.Fatal("no model request of the turn shows the steered message")
	}
	t.Logf("prompt --steer into Claude's running turn: %s until that turn ended", took.Round(time.Millisecond))
}
