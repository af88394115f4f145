package e2e_test

// Claude's own usage window, driven offline through the real adapter: the
// fake Messages server reports a 5-hour window in the anthropic-ratelimit-
// unified-* headers of its answers (-window-word), Claude Code turns them
// into its SDK's rate_limit_event, and the adapter sends that as
// _claude/rateLimit on a usage_update. Claude Code reads those headers for
// a claude.ai subscriber only (an OAuth token, not an API key), so the rig
// signs in with a fake CLAUDE_CODE_OAUTH_TOKEN.

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

const claudeWindowWord = "NEARLIMIT"

// asSubscriber signs Claude Code in as a claude.ai subscriber (a fake OAuth
// token) instead of with an API key: it reads the unified rate-limit
// headers for subscribers alone.
func (r *claudeRig) asSubscriber() {
	delete(r.agentEnv, "ANTHROPIC_API_KEY")
	r.setAgentEnv("CLAUDE_CODE_OAUTH_TOKEN", "offline-fake-oauth-token")
}

func TestLimit_ClaudesRateLimitHeadersShowTheWindowAndHoldUnattendedWork(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t, "-window-word", claudeWindowWord, "-window-used", "0.97", "-window-reset", "2h")
	r.asSubscriber()
	before := time.Now()
	id := r.startWarm("60s", "--agent", "claude", "please "+claudeWindowWord+" say hello")
	rl := assertClaudeWindowShown(t, r, id, before)

	// 97% is at or above pause_at_percent (95 by default). A person's own
	// prompt goes, with one line of warning.
	if res := r.run("prompt", id, "a person asks for more"); res.code != 0 || strings.Count(res.stderr, "warning:") != 1 ||
		!strings.Contains(res.stderr, "97% used") || !strings.Contains(res.stderr, "pause_at_percent 95") {
		t.Fatalf("a person's prompt near the limit: want it to go with one warning line: %s", res)
	}
	// Work nobody follows waits for the reset: the interrupted turn recover
	// would continue, and a queued prompt.
	r.killAt(isType(eventlog.EventAgentMessage), 30*time.Second, "prompt", id, claudeSlowPrompt)
	if s := r.session(id); s.State != state.StateRunning {
		t.Fatalf("no interrupted turn after the kill: %+v", s)
	}
	requests := len(r.requests())
	res := r.run("recover", id)
	if res.code != 8 || !strings.Contains(res.stderr, "pause_at_percent 95") {
		t.Fatalf("recover before the reset: want exit 8 naming pause_at_percent: %s", res)
	}
	st := r.window(id)
	if st.Status.Badge != verdict.BadgeWaitingForLimit || st.Session.Limit == nil || !st.Session.Limit.Held ||
		st.Session.Limit.ResetAt == nil || !st.Session.Limit.ResetAt.Equal(*rl.ResetsAt) {
		t.Fatalf("badge %q, limit %+v: want waiting-for-limit, held until the window's reset", st.Status.Badge, st.Session.Limit)
	}
	if res := r.run("prompt", id, "--no-follow", "QUEUEDWORK while nobody watches"); res.code != 0 ||
		!strings.Contains(res.stdout, "holds unattended work until the agent's usage window resets") {
		t.Fatalf("a prompt queued while the session waits does not say so: %s", res)
	}
	time.Sleep(2 * time.Second) // what a wrongly started turn would need to reach the model
	evs := r.eventsSoFar(id)
	if n := continuations(evs); n != 0 {
		t.Fatalf("%d continuations of the interrupted turn before the reset", n)
	}
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && strings.Contains(e.Content, "QUEUEDWORK") {
			t.Fatal("the queued prompt ran above pause_at_percent")
		}
	}
	if n := len(r.requests()); n != requests {
		t.Fatalf("%d model requests after the held work, want %d", n, requests)
	}
	r.assertNoAgentSurvives("the held work")
}

// A subscription's usage limit: Claude Code reads the 429's unified
// headers and says when the limit resets ("You've hit your 5-hour limit ·
// resets 6:08pm (UTC)"), which an API key's answer does not
// (TestLimit_ClaudesUsageLimitAnswerEndsTheTurnRateLimited).
func TestLimit_ClaudesSubscriptionUsageLimitSaysWhenItResets(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t, "-limit-word", limitWord, "-limit-reset", "2h")
	r.asSubscriber()
	id := r.startWarm("60s", "--agent", "claude", "remember PAPAYA")
	res := r.run("prompt", id, limitWord+" please go on")
	assertRateLimited(t, r.world, id, res, time.Now().Add(2*time.Hour))
	if !strings.Contains(res.stderr, "it resets at ") {
		t.Fatalf("the limit's reset time is not said: %s", res)
	}
}

// assertClaudeWindowShown checks that the adapter's one report (97% of a
// five_hour window, resetting 2 h after before) was recorded as a limit
// event and that status and usage, in text and --json, show it.
func assertClaudeWindowShown(t *testing.T, r *claudeRig, id string, before time.Time) *state.RateWindow {
	t.Helper()
	limits := ofType(r.events(id), eventlog.EventLimit)
	if len(limits) != 1 {
		t.Fatalf("%d limit events, want the one the adapter's _claude/rateLimit made", len(limits))
	}
	t.Logf("recorded from the adapter's report: %s", limits[0].Data)
	rl := r.window(id).Session.RateLimit
	if rl == nil || rl.Window != "five_hour" || rl.Status != "allowed_warning" || rl.Source != "claude" ||
		rl.UsedPercent == nil || *rl.UsedPercent != 97 || rl.ResetsAt == nil || rl.Problem != "" {
		t.Fatalf("status --json rate_limit = %+v", rl)
	}
	if want := before.Add(2 * time.Hour); rl.ResetsAt.Before(want.Add(-90*time.Second)) || rl.ResetsAt.After(want.Add(90*time.Second)) {
		t.Fatalf("resets_at %v, want about %v", rl.ResetsAt, want)
	}
	reset := rl.ResetsAt.Local().Format(time.RFC3339)
	if text := r.mustRun("status", id).stdout; !strings.Contains(text, "five_hour 97% used, status allowed_warning, resets at "+reset) {
		t.Fatalf("status does not show the window:\n%s", text)
	}
	var u struct {
		Usage struct {
			Groups []struct{ Limit *state.RateWindow }
		}
	}
	decodeJSON(t, r.mustRun("--json", "usage", id).stdout, &u)
	if g := u.Usage.Groups; len(g) != 1 || g[0].Limit == nil || g[0].Limit.UsedPercent == nil || *g[0].Limit.UsedPercent != 97 || !g[0].Limit.ResetsAt.Equal(*rl.ResetsAt) {
		t.Fatalf("usage --json: %+v", u)
	}
	if text := r.mustRun("usage", id).stdout; !strings.Contains(text, id+" window: five_hour 97% used, status allowed_warning, resets at "+reset) {
		t.Fatalf("usage does not show the window:\n%s", text)
	}
	return rl
}
