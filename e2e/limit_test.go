package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// limitMarker is the usage_limit marker of the log and its reset time.
func limitMarker(t *testing.T, evs []state.Event) (state.Event, time.Time) {
	t.Helper()
	for _, e := range evs {
		if e.Type == state.EventMarker && e.Kind == "usage_limit" {
			var d struct {
				ResetAt time.Time `json:"reset_at"`
			}
			json.Unmarshal(e.Data, &d)
			return e, d.ResetAt
		}
	}
	t.Fatal("no usage_limit marker in the log")
	return state.Event{}, time.Time{}
}

func TestLimit_TheDemoAgentsLimitEndsTheTurnRateLimitedWithTheResetTimeAndExit8(t *testing.T) {
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
	if st := w.status(id); st.Status.Badge != state.BadgeWaitingForLimit {
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
	if st := w.status(id); st.Status.Badge != state.BadgeIdle {
		t.Fatalf("badge after a turn ran: %q, want idle", st.Status.Badge)
	}
}

func TestLimit_AFollowerOfAQueuedPromptAlsoExits8(t *testing.T) {
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
	if st := w.status(id); st.Status.Badge != state.BadgeWaitingForLimit {
		t.Fatalf("badge %q with a warm owner, want waiting-for-limit", st.Status.Badge)
	}
}
