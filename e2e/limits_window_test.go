package e2e_test

// The agent's usage window ([limits], docs/unattended.md), driven by the
// demo agent's /limit PERCENT RESET_SECONDS, which sends the usage_update
// Claude's adapter sends (its _meta "_claude/rateLimit"), on the default
// path: warm detached owners.

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// windowJSON is the part of status --json about the window.
type windowJSON struct {
	Session struct {
		RateLimit  *state.RateWindow `json:"rate_limit"`
		Limit      *state.UsageLimit `json:"usage_limit"`
		AfterReset *state.AfterReset `json:"after_reset"`
		LastWake   *state.WakeReport `json:"last_wake"`
	}
	Status struct{ Badge string }
}

func (w *world) window(id string) windowJSON {
	w.t.Helper()
	var st windowJSON
	decodeJSON(w.t, w.mustRun("--json", "status", id).stdout, &st)
	return st
}

func TestLimits_TheAgentsWindowShowsInStatusAndUsage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	before := time.Now()
	w.mustRun("prompt", id, "/limit 42 3600")
	st := w.window(id)
	rl := st.Session.RateLimit
	if rl == nil || rl.UsedPercent == nil || *rl.UsedPercent != 42 || rl.Window != "five_hour" || rl.Source != "claude" || rl.ResetsAt == nil {
		t.Fatalf("status --json rate_limit = %+v", rl)
	}
	if want := before.Add(time.Hour); rl.ResetsAt.Before(want.Add(-5*time.Second)) || rl.ResetsAt.After(want.Add(5*time.Second)) {
		t.Fatalf("resets_at %v, want about %v", rl.ResetsAt, want)
	}
	if text := w.mustRun("status", id).stdout; !strings.Contains(text, "window    five_hour 42% used, status allowed, resets at ") {
		t.Fatalf("status text does not show the window:\n%s", text)
	}
	var u struct {
		Usage struct {
			Groups []struct {
				Key   string
				Limit *state.RateWindow
			}
		}
	}
	decodeJSON(t, w.mustRun("--json", "usage", id).stdout, &u)
	if len(u.Usage.Groups) != 1 || u.Usage.Groups[0].Limit == nil || *u.Usage.Groups[0].Limit.UsedPercent != 42 {
		t.Fatalf("usage --json: %+v", u)
	}
	if text := w.mustRun("usage", id).stdout; !strings.Contains(text, id+" window: five_hour 42% used") {
		t.Fatalf("usage text does not show the window:\n%s", text)
	}
	var limits int
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventLimit {
			limits++
		}
	}
	if limits != 1 {
		t.Fatalf("%d limit events, want 1", limits)
	}
}

func TestLimits_APersonsOwnPromptNearTheLimitGoesWithOneWarningLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	w.mustRun("prompt", id, "/limit 96 3600")
	r := w.run("prompt", id, "/say GOES")
	if r.code != 0 || !strings.Contains(r.stdout, "GOES") {
		t.Fatalf("a person's own prompt near the limit did not go: %s", r)
	}
	if n := strings.Count(r.stderr, "warning:"); n != 1 || !strings.Contains(r.stderr, "96% used") || !strings.Contains(r.stderr, "pause_at_percent 95") {
		t.Fatalf("want one warning line naming the window and the threshold, got %d:\n%s", n, r.stderr)
	}
	// Below the threshold: no warning.
	w.mustRun("prompt", id, "/limit 50 3600")
	if r := w.mustRun("prompt", id, "/say QUIET"); strings.Contains(r.stderr, "warning:") {
		t.Fatalf("a warning below the threshold:\n%s", r.stderr)
	}
}

// interruptedNearTheLimit leaves id with a turn cut off by a kill of every
// process of the home, after the agent reported its window used at
// percent, resetting in resetSecs.
func (w *world) interruptedNearTheLimit(id, percent, resetSecs string) {
	w.t.Helper()
	w.killAt(isType(eventlog.EventAgentMessage), 20*time.Second, "prompt", id, "/limit "+percent+" "+resetSecs+"\n/say working\n/sleep 30000")
	if s := w.session(id); s.State != state.StateRunning || s.RateLimit == nil {
		w.t.Fatalf("no interrupted turn with a window after the kill: %+v", s)
	}
}

func TestLimits_RecoverHoldsAnInterruptedTurnBeforeTheLimitAndContinuesItOnceAfterTheReset(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	// 10 s: the first recover runs before the reset even on a loaded machine.
	w.interruptedNearTheLimit(id, "97", "10")
	startsBefore := lastAgentStart(w.events(id))
	r := w.run("recover", id)
	if r.code != 8 || !strings.Contains(r.stderr, "pause_at_percent 95") {
		t.Fatalf("recover near the limit: want exit 8 naming the threshold: %s", r)
	}
	st := w.window(id)
	if st.Status.Badge != verdict.BadgeWaitingForLimit || st.Session.Limit == nil || !st.Session.Limit.Held {
		t.Fatalf("badge %q, limit %+v: want waiting-for-limit, held", st.Status.Badge, st.Session.Limit)
	}
	evs := w.events(id)
	if continuations(evs) != 0 {
		t.Fatal("the interrupted turn was continued above pause_at_percent")
	}
	if len(markersOf(evs, "usage_limit")) != 1 {
		t.Fatal("no usage_limit marker for the hold")
	}
	if lastAgentStart(evs) != startsBefore {
		t.Fatal("recover launched the agent for a turn it held back")
	}
	// A second recover before the reset does nothing new (no loop, no second schedule).
	if r := w.run("recover", id); r.code != 8 || len(markersOf(w.events(id), "usage_limit")) != 1 {
		t.Fatalf("a second recover before the reset: %s", r)
	}
	time.Sleep(time.Until(*st.Session.Limit.ResetAt) + 300*time.Millisecond)
	r = w.mustRun("recover", id)
	evs = w.events(id)
	if n := continuations(evs); n != 1 {
		t.Fatalf("%d continuations after the reset, want 1: %s", n, r)
	}
	if reps := markersOf(evs, "wake_report"); len(reps) != 2 || !strings.Contains(reps[1].Summary, "resumed 1 turn(s)") {
		t.Fatalf("wake reports %+v", reps)
	}
	st = w.window(id)
	if st.Status.Badge != verdict.BadgeIdle || st.Session.Limit != nil || st.Session.LastWake == nil || st.Session.LastWake.Turns != 1 {
		t.Fatalf("after the wake: badge %q limit %+v last wake %+v", st.Status.Badge, st.Session.Limit, st.Session.LastWake)
	}
	if text := w.mustRun("status", id).stdout; !strings.Contains(text, "last wake ") || !strings.Contains(text, "resumed 1 turn(s)") {
		t.Fatalf("status does not show the wake's report:\n%s", text)
	}
	w.mustRun("recover", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after a third recover", n)
	}
}

// lastAgentStart is the seq of the log's last agent_started.
func lastAgentStart(evs []eventlog.Event) int64 {
	var seq int64
	for _, e := range evs {
		if e.Type == eventlog.EventAgentStarted {
			seq = e.Seq
		}
	}
	return seq
}

func TestLimits_PauseAtPercent100TurnsTheHoldOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[limits]\npause_at_percent = 100\n")
	id := w.startWarm("30s")
	w.interruptedNearTheLimit(id, "99", "3600")
	w.mustRun("recover", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations with pause_at_percent 100, want 1", n)
	}
}

func TestLimits_AQueuedNoFollowPromptWaitsForTheResetAndRecoverServesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	w.mustRun("prompt", id, "/limit 99 10")
	if r := w.run("prompt", id, "--no-follow", "/say LATER"); r.code != 0 {
		t.Fatalf("prompt --no-follow: %s", r)
	}
	waitFor(t, 20*time.Second, "the queued prompt to be held", func() bool {
		return w.window(id).Status.Badge == verdict.BadgeWaitingForLimit
	})
	said := func() bool {
		for _, e := range w.events(id) {
			if e.Type == eventlog.EventUserMessage && strings.Contains(e.Content, "/say LATER") {
				return true
			}
		}
		return false
	}
	if said() {
		t.Fatal("the queued prompt ran above pause_at_percent")
	}
	// Before the reset, recover says the queued prompt waits (exit 8).
	if r := w.run("recover", id); r.code != 8 || !strings.Contains(r.stdout, "waits for the usage limit") {
		t.Fatalf("recover before the reset, with a queued prompt held: %s", r)
	}
	reset := w.window(id).Session.Limit.ResetAt
	time.Sleep(time.Until(*reset) + 300*time.Millisecond)
	w.mustRun("recover", id)
	if !said() {
		t.Fatal("recover after the reset did not serve the queued prompt")
	}
	if st := w.window(id); st.Session.Limit != nil || st.Status.Badge == verdict.BadgeWaitingForLimit {
		t.Fatalf("still waiting after the queued prompt ran: %+v", st)
	}
}

func TestLimits_NonsenseWindowDataIsClampedOrIgnoredWithAMarker(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	cases := []struct {
		directive string
		wantPct   float64
		problem   string
	}{
		{"/limit 250 3600", 100, "clamped to 100%"},
		{"/limit 99 -60", 99, "in the past"},
		{"/limit 99 400000000", 99, "31 days ahead"},
	}
	for _, c := range cases {
		w.mustRun("prompt", id, c.directive)
		rl := w.window(id).Session.RateLimit
		if rl == nil || rl.UsedPercent == nil || *rl.UsedPercent != c.wantPct || !strings.Contains(rl.Problem, c.problem) {
			t.Fatalf("%s: rate_limit %+v", c.directive, rl)
		}
		if c.problem != "clamped to 100%" && rl.ResetsAt != nil {
			t.Fatalf("%s: a reset time that makes no sense was kept: %v", c.directive, rl.ResetsAt)
		}
	}
	if n := len(markersOf(w.events(id), "limit_data")); n != len(cases) {
		t.Fatalf("%d limit_data markers, want %d", n, len(cases))
	}
	// No reset time believed: an interrupted turn is not held (it would
	// wait forever), it is continued.
	w.interruptedNearTheLimit(id, "99", "-60")
	if r := w.run("recover", id); r.code != 0 || continuations(w.events(id)) != 1 {
		t.Fatalf("recover with no believable reset: %s", r)
	}
}

func TestLimits_AfterResetTurnsPausesForAPersonAndTheWakeReportReachesTheNotifyHook(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "[limits]\nafter_reset_turns = 1\n")
	id := w.startWarm("30s")
	w.mustRun("prompt", id, "/limit 99 10")
	w.mustRun("prompt", id, "--no-follow", "/say ONE")
	waitFor(t, 20*time.Second, "the first queued prompt to be held", func() bool {
		return w.window(id).Status.Badge == verdict.BadgeWaitingForLimit
	})
	if r := w.mustRun("prompt", id, "--no-follow", "/say TWO"); !strings.Contains(r.stdout, "holds unattended work until the agent's usage window resets") {
		t.Fatalf("a prompt queued while the session waits does not say so: %s", r)
	}
	reset := w.window(id).Session.Limit.ResetAt
	time.Sleep(time.Until(*reset) + 300*time.Millisecond)
	r := w.run("recover", id)
	if r.code != 5 || !strings.Contains(r.stderr, "after_reset_turns 1") {
		t.Fatalf("recover past after_reset_turns: want exit 5 naming it: %s", r)
	}
	st := w.window(id)
	if st.Status.Badge != verdict.BadgePaused || st.Session.AfterReset == nil || st.Session.AfterReset.Turns != 1 {
		t.Fatalf("badge %q after_reset %+v", st.Status.Badge, st.Session.AfterReset)
	}
	var ran []string
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventUserMessage && strings.HasPrefix(e.Content, "/say ") {
			ran = append(ran, e.Content)
		}
	}
	if strings.Join(ran, ",") != "/say ONE" {
		t.Fatalf("unattended turns that ran: %q, want only ONE", ran)
	}
	n := waitNote(t, notes, id, "wake")
	if !strings.Contains(n.Summary, "resumed 1 turn(s), spent 0.001 USD") || !strings.Contains(n.Summary, "paused for a person") {
		t.Fatalf("wake note %+v", n)
	}
	// A person's prompt carries on, and the held one is served after it.
	w.mustRun("prompt", id, "/say MINE")
	waitFor(t, 20*time.Second, "the queued prompt to run after the person's", func() bool {
		for _, e := range w.eventsSoFar(id) {
			if e.Type == eventlog.EventUserMessage && e.Content == "/say TWO" {
				return true
			}
		}
		return false
	})
}

func TestLimits_AUsageLimitThatDoesNotSayWhenItResetsTakesTheWindowsReset(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	w.mustRun("prompt", id, "/limit 99 3600")
	window := w.window(id).Session.RateLimit.ResetsAt
	if r := w.run("prompt", id, "/limit -"); r.code != 8 || !strings.Contains(r.stderr, "resets at") {
		t.Fatalf("want exit 8 with the window's reset time: %s", r)
	}
	if _, reset := limitMarker(t, w.events(id)); !reset.Equal(*window) {
		t.Fatalf("the limit's reset %v, want the window's %v", reset, window)
	}
}

func TestLimits_APersonsPromptTakesTheHeldQueuedWorkWithIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("30s")
	w.mustRun("prompt", id, "/limit 99 3600")
	w.mustRun("prompt", id, "--no-follow", "/say HELD")
	waitFor(t, 20*time.Second, "the queued prompt to be held", func() bool {
		return w.window(id).Status.Badge == verdict.BadgeWaitingForLimit
	})
	r := w.run("prompt", id, "/say MINE")
	if r.code != 0 || !strings.Contains(r.stdout, "MINE") {
		t.Fatalf("a person's prompt behind held work: %s", r)
	}
	var ran []string
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventUserMessage && strings.HasPrefix(e.Content, "/say ") {
			ran = append(ran, e.Content)
		}
	}
	if strings.Join(ran, ",") != "/say HELD,/say MINE" {
		t.Fatalf("turns %q, want the held one, then the person's", ran)
	}
	if st := w.window(id); st.Session.Limit != nil {
		t.Fatalf("the hold is still recorded: %+v", st.Session.Limit)
	}
}
