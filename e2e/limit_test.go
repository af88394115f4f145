package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// limitMarker is the usage_limit marker of the log and its reset time.
func limitMarker(t *testing.T, evs []eventlog.Event) (eventlog.Event, time.Time) {
	t.Helper()
	for _, e := range evs {
		if e.Type == eventlog.EventMarker && e.Kind == "usage_limit" {
			var d struct {
				ResetAt time.Time `json:"reset_at"`
			}
			json.Unmarshal(e.Data, &d)
			return e, d.ResetAt
		}
	}
	t.Fatal("no usage_limit marker in the log")
	return eventlog.Event{}, time.Time{}
}

func TestLimit_TheDemoAgentsLimitEndsTheTurnRateLimitedWithTheResetTimeAndExit8(t *testing.T) {
	t.Parallel()
	w, id := keyWorld(t)
	before := time.Now()
	r := w.run("prompt", id, "--linger", "0", "/limit 120")
	if r.code != 8 {
		t.Fatalf("want exit 8: %s", r)
	}
	if !strings.Contains(r.stderr, "usage limit") || !strings.Contains(r.stderr, "resets at") {
		t.Fatalf("the error line does not say what happened and when it ends: %q", r.stderr)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, lastTurn(evs)); stop != state.StopRateLimited {
		t.Fatalf("turn ended %q, want rate_limited", stop)
	}
	m, reset := limitMarker(t, evs)
	if want := before.Add(120 * time.Second); reset.Before(want.Add(-2*time.Second)) || reset.After(want.Add(3*time.Second)) || m.Severity != "warning" {
		t.Fatalf("marker %+v: reset %v, want about %v", m, reset, want)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeWaitingForLimit {
		t.Fatalf("badge %q, want waiting-for-limit", st.Status.Badge)
	}
	// --json: the error object names it.
	j := w.run("--json", "prompt", id, "--linger", "0", "/limit 120")
	if j.code != 8 || !strings.Contains(j.stdout, `"code":"rate_limited"`) {
		t.Fatalf("--json: %s", j)
	}
	// The next turn that runs lifts it.
	if got := w.mustRun("prompt", id, "--linger", "0", "/say AFTER").stdout; !strings.Contains(got, "AFTER") {
		t.Fatalf("prompt after the limit: %q", got)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle {
		t.Fatalf("badge after a turn ran: %q, want idle", st.Status.Badge)
	}
}

func TestLimit_AFollowerOfAQueuedPromptAlsoExits8(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("--linger", "30s")
	if r.code != 0 {
		t.Fatal(r)
	}
	defer w.run("close", id)
	q := w.run("prompt", id, "/limit 60")
	if q.code != 8 {
		t.Fatalf("a prompt served by the warm owner: want exit 8: %s", q)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeWaitingForLimit {
		t.Fatalf("badge %q with a warm owner, want waiting-for-limit", st.Status.Badge)
	}
}

// limitContinuations are the turns that continued after a usage limit.
func limitContinuations(evs []eventlog.Event) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && strings.HasPrefix(e.Content, "The usage limit that stopped your previous turn has reset.") {
			out = append(out, e)
		}
	}
	return out
}

func TestLimit_RecoverContinuesASessionWhoseResetTimeHasPassed(t *testing.T) {
	t.Parallel()
	w, id := keyWorld(t)
	// 4 s: the recover below runs before the reset even on a loaded machine
	// (with 1 s it once ran after it, and continued).
	if r := w.run("prompt", id, "--linger", "0", "/limit 4"); r.code != 8 {
		t.Fatal(r)
	}
	reset := w.session(id).Limit.ResetAt
	if reset == nil {
		t.Fatal("the limit was recorded without its reset time")
	}
	// Before the reset: nothing to do.
	if r := w.mustRun("recover", id); len(limitContinuations(w.events(id))) != 0 {
		t.Fatalf("recover continued before the reset time (%s left): %s", time.Until(*reset), r)
	}
	time.Sleep(time.Until(*reset) + 500*time.Millisecond)
	r := w.mustRun("recover")
	evs := w.events(id)
	conts := limitContinuations(evs)
	if len(conts) != 1 || !strings.Contains(conts[0].Content, "> /limit 4") {
		t.Fatalf("want one continuation quoting the cut-off request: %d\n%s", len(conts), r)
	}
	if stop := turnEnd(evs, conts[0].TurnID); stop != eventlog.StopEndTurn {
		t.Fatalf("the continuation ended %q", stop)
	}
	if s := w.session(id); s.Limit != nil || s.LimitResumes != 0 {
		t.Fatalf("after a turn that ended well the limit is still recorded: %+v resumes %d", s.Limit, s.LimitResumes)
	}
	if st := w.status(id); st.Status.Badge != verdict.BadgeIdle {
		t.Fatalf("badge %q", st.Status.Badge)
	}
	// Nothing left to continue: a second recover does nothing.
	w.mustRun("recover", id)
	if n := len(limitContinuations(w.events(id))); n != 1 {
		t.Fatalf("%d continuations after a second recover", n)
	}
}

// requireAtd skips, visibly, unless at and a running atd are here; as root
// it starts atd when installed but not running (a container has no init).
func requireAtd(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("at"); err != nil {
		t.Skip("SKIP: at is not installed (.ci/run installs Debian's at)")
	}
	if exec.Command("pgrep", "-x", "atd").Run() != nil {
		if os.Geteuid() != 0 || exec.Command("atd").Run() != nil {
			t.Skip("SKIP: atd is not running and cannot be started here")
		}
	}
}

type limitStatusJSON struct {
	Session struct {
		Limit *state.UsageLimit `json:"usage_limit"`
	}
}

func TestLimit_ResumeAfterLimitSchedulesRecoverWithTheOSSchedulerAndCloseCancelsIt(t *testing.T) {
	requireAtd(t)
	w, id := keyWorld(t)
	w.config("[session]\nresume_after_limit = true\n")
	r := w.run("prompt", id, "--linger", "0", "/limit 3")
	if r.code != 8 || !strings.Contains(r.stderr, "is scheduled for") {
		t.Fatalf("want exit 8 and the schedule named: %s", r)
	}
	var st limitStatusJSON
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Session.Limit == nil || st.Session.Limit.Scheduled == nil || st.Session.Limit.Scheduled.Handle == "" {
		t.Fatalf("status shows no schedule: %+v", st.Session.Limit)
	}
	sc := st.Session.Limit.Scheduled
	if text := w.mustRun("status", id).stdout; !strings.Contains(text, "scheduled kandev recover "+id) {
		t.Fatalf("status text does not show the schedule:\n%s", text)
	}
	if _, m := limitMarker(t, w.events(id)); m.IsZero() {
		t.Fatal("marker without reset time")
	}
	if sc.Via == "at" {
		if out, _ := exec.Command("atq").Output(); !strings.Contains(string(out), sc.Handle+"\t") {
			t.Fatalf("atq does not list job %s:\n%s", sc.Handle, out)
		}
	}
	// The OS runs kandev recover at the reset (at: on the next minute).
	waitFor(t, 90*time.Second, "the scheduled recover to continue the session", func() bool {
		evs := w.eventsSoFar(id)
		c := limitContinuations(evs)
		return len(c) == 1 && turnEnd(evs, c[0].TurnID) == eventlog.StopEndTurn
	})
	waitFor(t, 10*time.Second, "the record to settle", func() bool { return w.session(id).Limit == nil })

	// Another limit, scheduled, then kandev close cancels it.
	if r := w.run("prompt", id, "--linger", "0", "/limit 600"); r.code != 8 {
		t.Fatal(r)
	}
	sc2 := w.session(id).Limit.Scheduled
	if sc2 == nil {
		t.Fatal("the second limit was not scheduled")
	}
	if out := w.mustRun("close", id).stdout; !strings.Contains(out, "cancelled the kandev recover") {
		t.Fatalf("close did not say it cancelled the schedule: %q", out)
	}
	if w.session(id).Limit.Scheduled != nil {
		t.Fatal("the record still shows the cancelled schedule")
	}
	if sc2.Via == "at" {
		if out, _ := exec.Command("atq").Output(); strings.Contains(string(out), sc2.Handle+"\t") {
			t.Fatalf("atq still lists the cancelled job %s:\n%s", sc2.Handle, out)
		}
	}
}

func TestLimit_WaitUntilWaitingForLimit(t *testing.T) {
	t.Parallel()
	w, id := keyWorld(t)
	b := w.launch(nil, "prompt", id, "--linger", "0", "/sleep 300\n/limit 60")
	r := w.run("wait", id, "--until", "waiting-for-limit", "--timeout", "30s")
	if r.code != 0 || !strings.Contains(r.stdout, "waiting-for-limit") {
		t.Fatalf("wait --until waiting-for-limit: %s", r)
	}
	b.cmd.Wait()
	if code := b.cmd.ProcessState.ExitCode(); code != 8 {
		t.Fatalf("the prompt exited %d, want 8", code)
	}
}
