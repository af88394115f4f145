package e2e_test

// ACP as current agents speak it, on the demo agent with its switches:
// setup offered only as config options (a model-category option, a
// thought_level option, a boolean), titles the agent sends, and
// session/close when a warm owner ends.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// currentAgents are demo agents that speak as ACP 1.x agents do (the
// demo agent's default), and as agents did before the model became an
// option (Gemini CLI still does).
const currentAgents = `[agents.current]
command = ["{kandev}", "demo-agent"]

[agents.legacy]
command = ["{kandev}", "demo-agent", "--legacy-models"]
`

type setupStatus struct {
	Session struct {
		Setup struct {
			Model, Mode string
			Options     map[string]string
		}
	}
}

func TestSetup_ModelEffortAndABooleanOfferedOnlyAsConfigOptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config(currentAgents)
	id, r := w.start("--agent", "current", "--model", "demo-large", "--set", "effort=high", "--set", "fast=on", "/setup")
	mustOK(t, r)
	const want = "mode: ask, model: demo-large, options: effort=high fast=true"
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("the agent does not run with the model, effort and fast given as options: %s", r)
	}
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" {
			t.Fatalf("what the agent offers as options was not taken: %s", m.Summary)
		}
	}
	r = w.mustRun("prompt", id, "/setup")
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("after a restore: %s", r)
	}
	var st setupStatus
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if s := st.Session.Setup; s.Model != "demo-large" || s.Options["effort"] != "high" || s.Options["fast"] != "true" {
		t.Fatalf("status shows %+v", s)
	}

	// kandev set with no owner, then the next launch: fast off, the model back to small.
	w.mustRun("set", id, "--model", "demo-small", "--set", "fast=off")
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "mode: ask, model: demo-small, options: effort=high fast=false") {
		t.Fatalf("set then restore: %s", r)
	}
}

func TestSetup_AnAgentWithTheRemovedModelsListIsStillSetThroughIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config(currentAgents)
	id, r := w.start("--agent", "legacy", "--model", "demo-large", "/setup")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "model: demo-large") {
		t.Fatalf("session/set_model did not reach the agent: %s", r)
	}
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" {
			t.Fatalf("the models list was not read: %s", m.Summary)
		}
	}
	w.mustRun("set", id, "--model", "demo-small")
	if r := w.mustRun("prompt", id, "/setup"); strings.Contains(r.stdout, "demo-large") {
		t.Fatalf("set then restore: %s", r)
	}
	if _, r := w.start("--agent", "legacy", "--model", "opus", "/setup"); !strings.Contains(r.stderr, "model opus (legacy offers demo-small, demo-large)") {
		t.Fatalf("a model the list does not have: %s", r)
	}
}

func TestSetup_AValueTheAgentDoesNotOfferSaysWhatItOffersAndStatusShowsWhatRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config(currentAgents)
	id, r := w.start("--agent", "current", "--model", "opus", "--set", "effort=max", "--set", "fast=maybe", "/setup")
	mustOK(t, r)
	for _, part := range []string{"model opus (current offers demo-small, demo-large)", "option effort=max (current offers low, high)", "option fast=maybe"} {
		if !strings.Contains(r.stderr, part) {
			t.Fatalf("the start does not say %q: %s", part, r)
		}
	}
	if n := strings.Count(r.stderr, "warning:"); n != 1 {
		t.Fatalf("want one warning line, got %d: %s", n, r.stderr)
	}
	var marks []eventlog.Event
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" {
			marks = append(marks, m)
		}
	}
	if len(marks) != 1 || marks[0].Severity != "warning" {
		t.Fatalf("want one setup_not_offered warning, got %+v", marks)
	}
	var st setupStatus
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if s := st.Session.Setup; s.Model != "demo-small" || s.Options["effort"] != "low" || s.Options["fast"] != "false" {
		t.Fatalf("status shows %+v, not what the agent runs", s)
	}
	if r := w.mustRun("status", id); strings.Contains(r.stdout, "opus") {
		t.Fatalf("status names what was asked, not what runs: %s", r)
	}
}

type titleList struct {
	Sessions []struct{ ID, Title string }
}

func (w *world) titleOf(id string) string {
	w.t.Helper()
	var st struct{ Session struct{ Title string } }
	decodeJSON(w.t, w.mustRun("--json", "status", id).stdout, &st)
	var l titleList
	decodeJSON(w.t, w.mustRun("--json", "list").stdout, &l)
	for _, s := range l.Sessions {
		if s.ID == id && s.Title != st.Session.Title {
			w.t.Fatalf("list says %q, status %q", s.Title, st.Session.Title)
		}
	}
	return st.Session.Title
}

func TestTitle_TheAgentsTitleNamesTheSessionUnlessThePersonNamedIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("/title Fix the login bug")
	mustOK(t, r)
	if got := w.titleOf(id); got != "Fix the login bug" {
		t.Fatalf("the agent's title is not the session's: %q", got)
	}
	// The person names it: a later title from the agent does not replace it.
	w.mustRun("set", id, "--title", "login work")
	w.mustRun("prompt", id, "/title Something else")
	if got := w.titleOf(id); got != "login work" {
		t.Fatalf("the agent's title replaced the person's: %q", got)
	}

	named, r := w.start("--title", "my task", "/title Agent's idea")
	mustOK(t, r)
	if got := w.titleOf(named); got != "my task" {
		t.Fatalf("start --title was replaced by the agent's title: %q", got)
	}
	if r := w.run("set", named, "--title", " "); r.code != 2 {
		t.Fatalf("a blank --title: %s", r)
	}
}

// demoClosed is how many session/close requests the demo agent saw for
// session id's agent session (its own file, "closed").
func (w *world) demoClosed(id string) int {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "demo-agent", w.session(id).ResumeToken+".json"))
	if err != nil {
		w.t.Fatal(err)
	}
	var f struct{ Closed int }
	if err := json.Unmarshal(b, &f); err != nil {
		w.t.Fatal(err)
	}
	return f.Closed
}

func TestClose_AWarmOwnerThatEndsClosesTheAgentsSessionWhereTheAgentOffersIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.noclose]\ncommand = [\"{kandev}\", \"demo-agent\", \"--no-close\"]\n")

	// kandev close ends the warm owner: the agent gets session/close first.
	id, r := w.start("--linger", "30s", "remember FIG")
	mustOK(t, r)
	if !w.ownerAlive(id) {
		t.Fatal("no warm owner")
	}
	if n := w.demoClosed(id); n != 0 {
		t.Fatalf("closed %d times while warm", n)
	}
	w.mustRun("close", id)
	waitFor(t, 10*time.Second, "the warm owner to exit", func() bool { return !w.ownerAlive(id) })
	if n := w.demoClosed(id); n != 1 {
		t.Fatalf("the demo agent saw %d session/close after kandev close, want 1", n)
	}

	// The linger runs out: the same. The session is restored and closed again.
	r = w.mustRun("prompt", id, "--linger", "1s", "recall")
	if !strings.Contains(r.stdout, "FIG") {
		t.Fatalf("after the close the session does not restore: %s", r)
	}
	waitFor(t, 10*time.Second, "the linger to run out", func() bool { return !w.ownerAlive(id) })
	if n := w.demoClosed(id); n != 2 {
		t.Fatalf("the demo agent saw %d session/close after the linger ran out, want 2", n)
	}

	// No linger (CI): nothing warm ends, nothing is closed.
	r = w.mustRun("prompt", id, "--linger", "0", "hello")
	if n := w.demoClosed(id); n != 2 {
		t.Fatalf("a command without linger closed the session (%d)", n)
	}

	// An agent that does not advertise it is not asked.
	nc, r := w.start("--agent", "noclose", "--linger", "30s", "hello")
	mustOK(t, r)
	w.mustRun("close", nc)
	waitFor(t, 10*time.Second, "the warm owner to exit", func() bool { return !w.ownerAlive(nc) })
	if n := w.demoClosed(nc); n != 0 {
		t.Fatalf("session/close sent to an agent that does not offer it (%d)", n)
	}
	for _, m := range ofType(w.events(nc), eventlog.EventMarker) {
		t.Fatalf("a marker about the close: %s", m.Summary)
	}
}

func TestCancelRequest_AStuckStartUpRequestIsCancelledBeforeTheAgentIsKilled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config("[agent]\nhandshake_timeout_seconds = 1\n\n[agents.stuck]\ncommand = [\"{kandev}\", \"demo-agent\", \"--start-delay\", \"20000\"]\n")
	began := time.Now()
	_, r := w.start("--agent", "stuck", "hello")
	if r.code != 6 || !strings.Contains(r.stderr, "did not answer initialize within 1s") {
		t.Fatalf("a hung initialize: want exit 6 naming it, %s", r)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("the start took %v", d)
	}
	b, err := os.ReadFile(filepath.Join(w.home, "demo-agent", "cancelled-requests.log"))
	if err != nil || string(b) != "initialize\n" {
		t.Fatalf("the agent did not see $/cancel_request for its initialize before it was stopped: %q, %v", b, err)
	}
}

func TestSet_OnALiveAgentThatOffersOptionsOnlyTakesEffortAndOnOffAndNamesWhatItOffers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config(currentAgents)
	id, r := w.start("--agent", "current", "--linger", "30s", "hello")
	mustOK(t, r)
	defer w.run("close", id)
	r = w.mustRun("set", id, "--model", "demo-large", "--set", "effort=high", "--set", "fast=ON")
	if !strings.Contains(r.stdout, "applied by the live owner") || !strings.Contains(r.stdout, "option model=demo-large") || !strings.Contains(r.stdout, "option fast=true") {
		t.Fatalf("set on a live agent that offers options only: %s", r)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "mode: ask, model: demo-large, options: effort=high fast=true") {
		t.Fatalf("the agent does not run it: %s", r)
	}
	r = w.run("set", id, "--model", "opus")
	if r.code != 2 || !strings.Contains(r.stderr, "model opus (current offers demo-small, demo-large)") {
		t.Fatalf("a model the agent does not offer: want exit 2 naming what current offers, %s", r)
	}
	var st setupStatus
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if s := st.Session.Setup; s.Model != "demo-large" || s.Options["fast"] != "true" {
		t.Fatalf("status shows %+v, not what runs", s)
	}
}
