package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// usageReport is kandev usage --json.
type usageReport struct {
	Usage struct {
		By     string
		Since  string
		Groups []usageGroup
		Total  usageGroup
	}
}

type usageGroup struct {
	Key            string
	Agent          string
	Sessions       int
	TurnsWithUsage int `json:"turns_with_usage"`
	Cost           *eventlog.Cost
	Used, Size     int64
}

func (w *world) usage(args ...string) usageReport {
	w.t.Helper()
	var u usageReport
	decodeJSON(w.t, w.mustRun(append([]string{"--json", "usage"}, args...)...).stdout, &u)
	return u
}

func costOf(c *eventlog.Cost) string {
	if c == nil {
		return "none"
	}
	return c.String()
}

func TestUsage_DemoTurnsAreLoggedAndTotalledInStatusAndList(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("remember a")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "recall")
	us := ofType(w.events(id), eventlog.EventUsage)
	if len(us) != 2 {
		t.Fatalf("%d usage events for two turns, want 2: %+v", len(us), us)
	}
	for i, want := range []string{"0.001 USD", "0.002 USD"} {
		e := us[i]
		if e.TurnID != "t"+string(rune('1'+i)) || costOf(e.Cost) != want || costOf(e.SessionCost) != want || e.Size == nil || *e.Size != 100000 || e.Used == nil {
			t.Fatalf("usage event %d: turn %s cost %s session cost %s size %v", i, e.TurnID, costOf(e.Cost), costOf(e.SessionCost), e.Size)
		}
	}
	// "remember a" + "OK, I will remember a." + "recall" + "You asked me to remember: a."
	want := state.UsageTotals{Used: 14, Size: 100000, Cost: &eventlog.Cost{Amount: 0.002, Currency: "USD"}, TurnsWithUsage: 2}
	var st struct{ Session state.Session }
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if u := st.Session.Usage; u == nil || u.Used != want.Used || u.Size != want.Size || costOf(u.Cost) != "0.002 USD" || u.TurnsWithUsage != 2 {
		t.Fatalf("status usage = %+v", u)
	}
	var l struct{ Sessions []state.Session }
	decodeJSON(t, w.mustRun("--json", "list").stdout, &l)
	if len(l.Sessions) != 1 || l.Sessions[0].Usage == nil || costOf(l.Sessions[0].Usage.Cost) != "0.002 USD" || l.Sessions[0].Usage.Used != 14 {
		t.Fatalf("list usage = %+v", l.Sessions)
	}
	if r := w.mustRun("events", id, "--type", "usage"); strings.Count(r.stdout, " usage ") != 2 || !strings.Contains(r.stdout, "context 14/100000, agent says 0.002 USD, session 0.002 USD") {
		t.Fatalf("events --type usage:\n%s", r.stdout)
	}
}

// ageFirstUsage moves the first usage event of id's log days back in time,
// as if that turn had run then.
func (w *world) ageFirstUsage(id string, days int) {
	w.t.Helper()
	path := filepath.Join(w.home, "sessions", id+".jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, line := range lines {
		var e eventlog.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == eventlog.EventUsage {
			old := eventlog.FormatTime(e.Time().AddDate(0, 0, -days))
			lines[i] = strings.Replace(line, `"timestamp":"`+e.Timestamp+`"`, `"timestamp":"`+old+`"`, 1)
			break
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func TestUsage_SumsPerSessionAgentAndDayWithSince(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.other]\ncommand = [\"" + kandevBin + "\", \"demo-agent\"]\n")
	a, r := w.start("remember a")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", a, "recall")
	b, r := w.start("--agent", "other", "hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.ageFirstUsage(a, 3)

	one := w.usage(a)
	if g := one.Usage.Groups; len(g) != 1 || g[0].Key != a || g[0].Agent != "demo" || costOf(g[0].Cost) != "0.002 USD" || g[0].TurnsWithUsage != 2 || g[0].Size != 100000 {
		t.Fatalf("usage %s: %+v", a, one.Usage)
	}
	all := w.usage("--all")
	if g := all.Usage.Groups; len(g) != 2 || g[0].Key != a || g[1].Key != b || costOf(all.Usage.Total.Cost) != "0.003 USD" || all.Usage.Total.Sessions != 2 {
		t.Fatalf("usage --all: %+v", all.Usage)
	}
	byAgent := w.usage("--all", "--by", "agent")
	if g := byAgent.Usage.Groups; len(g) != 2 || g[0].Key != "demo" || costOf(g[0].Cost) != "0.002 USD" || g[1].Key != "other" || costOf(g[1].Cost) != "0.001 USD" {
		t.Fatalf("usage --by agent: %+v", byAgent.Usage)
	}
	// The first turn of a ran three days ago: a day of its own.
	today := time.Now().Format(time.DateOnly)
	byDay := w.usage("--all", "--by", "day")
	if g := byDay.Usage.Groups; len(g) != 2 || g[1].Key != today || costOf(g[0].Cost) != "0.001 USD" || costOf(g[1].Cost) != "0.002 USD" || g[1].Sessions != 2 {
		t.Fatalf("usage --by day: %+v", byDay.Usage)
	}
	// Within the last two days a spent 0.001 (its second turn), b 0.001.
	recent := w.usage("--all", "--since", "2d")
	if costOf(recent.Usage.Total.Cost) != "0.002 USD" || recent.Usage.Total.TurnsWithUsage != 2 || recent.Usage.Since == "" {
		t.Fatalf("usage --since 2d: %+v", recent.Usage)
	}
	if g := w.usage(a, "--since", "2d").Usage.Groups; len(g) != 1 || costOf(g[0].Cost) != "0.001 USD" {
		t.Fatalf("usage %s --since 2d: %+v", a, g)
	}
	text := w.mustRun("usage", "--all").stdout
	if !strings.Contains(text, "TOTAL") || !strings.Contains(text, "0.003 USD") || !strings.Contains(text, a) {
		t.Fatalf("usage --all as a table:\n%s", text)
	}
	if r := w.run("usage"); r.code != 2 {
		t.Fatalf("usage naming nothing: %s", r)
	}
	if r := w.run("usage", "--all", "--since", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, "--since") {
		t.Fatalf("usage --since yesterday: %s", r)
	}
}

func TestUsage_MaxCostRefusesPromptsPausesContinuationUntilRaised(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[session]\nmax_cost = 0.002\n")
	id, r := w.start("remember a")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "recall")
	turns := len(ofType(w.events(id), eventlog.EventTurnStarted))
	r = w.run("prompt", id, "one more")
	msg := "the session has spent 0.002 USD of its max_cost 0.002 USD; raise [session] max_cost or start a new session"
	if r.code != 5 || !strings.Contains(r.stderr, msg) {
		t.Fatalf("third prompt over max_cost: %s", r)
	}
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != turns {
		t.Fatalf("a refused prompt started a turn (%d turns, want %d)", n, turns)
	}
	if r := w.run("--json", "prompt", id, "one more"); r.code != 5 || !strings.Contains(r.stdout, `"not_resumable"`) {
		t.Fatalf("refused prompt with --json: %s", r)
	}

	// A turn killed with room left; then the cap comes back down.
	w.config("[session]\nmax_cost = 0.003\n")
	w.crashMidTurn(id)
	w.config("[session]\nmax_cost = 0.002\n")
	r = w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, msg) {
		t.Fatalf("resume of a killed turn over max_cost: %s", r)
	}
	if st := w.status(id); st.Status.Badge != "paused" || st.Status.Pause == nil || st.Status.Pause.Kind != state.PauseCost {
		t.Fatalf("status over max_cost: %+v", st.Status)
	}
	if n := continuations(w.events(id)); n != 0 {
		t.Fatalf("%d continuations over max_cost, want 0", n)
	}

	// Raised: the pause clears and the killed turn gets its one continuation.
	w.config("[session]\nmax_cost = 0.01\n")
	if st := w.status(id); st.Status.Pause != nil || st.Status.Badge != "needs-resume" {
		t.Fatalf("status after raising max_cost: %+v", st.Status)
	}
	if !hasMarker(w.events(id), "continuation_resumed", "max_cost") {
		t.Fatal("no marker saying the cost pause cleared")
	}
	w.mustRun("resume", id)
	evs := w.events(id)
	if n := continuations(evs); n != 1 {
		t.Fatalf("%d continuations after raising max_cost, want 1", n)
	}
	if u := w.session(id).Usage; u == nil || costOf(u.Cost) != "0.004 USD" {
		t.Fatalf("usage after the continuation: %+v", u)
	}
}

// reported says what a real agent reports of its usage.
type reported struct{ context, cost, tokens bool }

// agentUsage checks that every turn of a real agent left usage in the log,
// and that the record's totals are what those events add up to.
func agentUsage(t *testing.T, evs []eventlog.Event, s *state.Session, want reported) {
	t.Helper()
	us := ofType(evs, eventlog.EventUsage)
	turns := len(ofType(evs, eventlog.EventTurnStarted))
	u := s.Usage
	if len(us) == 0 || u == nil || u.TurnsWithUsage != turns {
		t.Fatalf("%d usage events, totals %+v; want usage in each of %d turns", len(us), u, turns)
	}
	var tokens int64
	var last *eventlog.Cost
	for _, e := range us {
		if e.Tokens != nil {
			tokens += e.Tokens.Total
		}
		if e.SessionCost != nil {
			last = e.SessionCost
		}
	}
	if got := u.Used > 0 && u.Size > 0; got != want.context {
		t.Errorf("context window in the totals: %d/%d, want reported: %v", u.Used, u.Size, want.context)
	}
	if got := u.Cost != nil && u.Cost.Amount > 0 && last != nil && *last == *u.Cost; got != want.cost {
		t.Errorf("cost in the totals: %v (last event says %v), want reported: %v", costOf(u.Cost), costOf(last), want.cost)
	}
	if got := u.Tokens != nil && u.Tokens.Total == tokens && tokens > 0; got != want.tokens {
		t.Errorf("tokens in the totals: %+v (events add up to %d), want reported: %v", u.Tokens, tokens, want.tokens)
	}
}
