package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// switchWorld is a world with "plain", a demo agent that restores
// natively neither by resume nor by load (only the resume context brings
// its conversation back) and offers its model as the older models list
// (so no boolean "fast"), "ghost", a profile whose command is not
// installed, "broken", an installed command that is no ACP agent, and
// "opts", the demo agent as published (config options, a boolean "fast").
func switchWorld(t *testing.T) *world {
	w := newWorld(t)
	w.config(`
[agents.plain]
command = ["` + kandevBin + `", "demo-agent", "--no-resume", "--no-load", "--legacy-models"]
[agents.ghost]
command = ["/nonexistent/ghost-agent"]
[agents.broken]
command = ["` + kandevBin + `", "no-such-subcommand"]
[agents.opts]
command = ["` + kandevBin + `", "demo-agent"]
`)
	return w
}

// rememberApple starts a demo session (its owner left warm, the default)
// that was asked to remember APPLE.
func rememberApple(w *world) string {
	w.t.Helper()
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		w.t.Fatal(r)
	}
	return id
}

// switchesIn are the agent_switched events of a log.
func switchesIn(evs []eventlog.Event) []eventlog.Event {
	return ofType(evs, eventlog.EventAgentSwitched)
}

// assertSentOnce checks that each turn has one user message and its
// prompt was written to an agent once.
func assertSentOnce(t *testing.T, evs []eventlog.Event) {
	t.Helper()
	seen := map[string]int{}
	for _, e := range ofType(evs, eventlog.EventUserMessage) {
		seen[e.TurnID]++
		if seen[e.TurnID] > 1 {
			t.Fatalf("turn %s has user message %q twice", e.TurnID, e.Content)
		}
	}
	sent := map[string]int{}
	for _, e := range ofType(evs, eventlog.EventPromptSent) {
		sent[e.TurnID]++
		if sent[e.TurnID] > 1 {
			t.Fatalf("turn %s sent twice", e.TurnID)
		}
	}
	if len(sent) != len(ofType(evs, eventlog.EventTurnStarted)) {
		t.Fatalf("%d prompts sent for %d turns", len(sent), len(ofType(evs, eventlog.EventTurnStarted)))
	}
}

func TestSwitch_ToAnAgentWithoutNativeRestoreRecallsWhatWasSaidBefore(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	if !w.ownerAlive(id) {
		t.Fatal("the default path leaves the demo agent warm: the switch must close it")
	}
	r := w.mustRun("switch", id, "--agent", "plain")
	if !strings.Contains(r.stdout, "from agent demo to plain") {
		t.Fatalf("switch output:\n%s", r)
	}
	if w.ownerAlive(id) {
		t.Fatal("the warm demo owner outlived the switch")
	}
	if got := w.recall(id); !strings.Contains(got, "APPLE") {
		t.Fatalf("plain recalls %q after the switch, want APPLE", got)
	}
	evs := w.events(id)
	sw := switchesIn(evs)
	if len(sw) != 1 || sw[0].From != "demo" || sw[0].To != "plain" {
		t.Fatalf("agent_switched events: %+v", sw)
	}
	started := ofType(evs, eventlog.EventAgentStarted)
	if last := started[len(started)-1]; last.Restore != "new" || last.Seq < sw[0].Seq {
		t.Fatalf("plain must start fresh after the switch: %+v", last)
	}
	assertSentOnce(t, evs)
	assertNoSeqGap(t, evs)
	var st struct {
		Session state.Session `json:"session"`
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Session.Agent != "plain" {
		t.Fatalf("status says agent %q", st.Session.Agent)
	}
	if list := w.mustRun("list").stdout; !strings.Contains(list, "plain") {
		t.Fatalf("list does not show the agent:\n%s", list)
	}
	tr := w.mustRun("transcript", id).stdout
	if i, j := strings.Index(tr, "Switched from agent demo to plain"), strings.Index(tr, "remember APPLE"); i < 0 || j < 0 || j > i {
		t.Fatalf("the transcript must show one conversation with the switch marked after the first turn:\n%s", tr)
	}
}

func TestSwitch_WithAPromptRunsTheTurnOnTheNewAgentAtOnce(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	r := w.mustRun("switch", id, "--agent", "plain", "recall")
	if !strings.Contains(r.stdout, "from agent demo to plain") || !strings.Contains(r.stdout, "remember: APPLE") {
		t.Fatalf("switch with a prompt:\n%s", r)
	}
	evs := w.events(id)
	assertSentOnce(t, evs)
	if n := len(ofType(evs, eventlog.EventTurnStarted)); n != 2 {
		t.Fatalf("%d turns, want 2", n)
	}
	// And back: demo's own session was dropped, so it too gets the conversation.
	w.mustRun("switch", id, "--agent", "demo")
	if got := w.recall(id); !strings.Contains(got, "APPLE") {
		t.Fatalf("demo recalls %q after switching back", got)
	}
	assertSentOnce(t, w.events(id))
}

func TestSwitch_ForkSwitchesACopyAndLeavesTheSessionOnItsAgent(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	before := len(w.events(id))
	r := w.mustRun("switch", id, "--agent", "plain", "--fork")
	child := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if child == id || w.session(child).ParentID != id || w.session(child).Agent != "plain" {
		t.Fatalf("switch --fork:\n%s", r)
	}
	if w.session(id).Agent != "demo" || len(w.events(id)) != before {
		t.Fatal("the original changed")
	}
	if got := w.recall(child); !strings.Contains(got, "APPLE") {
		t.Fatalf("the fork on plain recalls %q", got)
	}
	w.mustRun("prompt", child, "remember PEAR")
	if got := w.recall(id); strings.Contains(got, "PEAR") || !strings.Contains(got, "APPLE") {
		t.Fatalf("the original recalls %q", got)
	}
	if len(switchesIn(w.events(id))) != 0 || len(switchesIn(w.events(child))) != 1 {
		t.Fatal("only the fork's log records the switch")
	}
}

func TestSwitch_BadInputIsRefusedWithTheRightCode(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	n := len(w.events(id))
	for _, tc := range []struct {
		agent string
		code  int
		says  string
	}{
		{"nosuch", 2, `unknown agent "nosuch"; installed agents are `},
		{"ghost", 2, "agent ghost is not installed here; installed agents are "},
		{"demo", 0, "runs agent demo already"},
	} {
		r := w.run("switch", id, "--agent", tc.agent)
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.says) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Fatalf("switch to %s: want exit %d saying %q:\n%s", tc.agent, tc.code, tc.says, r)
		}
		if strings.Contains(tc.says, "installed agents") && (!strings.Contains(r.stderr, "demo, opts, plain") || strings.Contains(r.stderr[strings.Index(r.stderr, "installed agents are"):], "ghost")) {
			t.Fatalf("the installed agents are not all named:\n%s", r)
		}
	}
	if len(w.events(id)) != n || w.session(id).Agent != "demo" || !w.ownerAlive(id) {
		t.Fatal("a refused or empty switch changed the session or closed its agent")
	}

	// Mid-turn: refused, the turn runs on to its end on its agent.
	busy, out := w.background("prompt", id, "/sleep 3000\n/say slept")
	waitForRunningTurn(t, w, id)
	r := w.run("switch", id, "--agent", "plain")
	if r.code != 3 || !strings.Contains(r.stderr, "kandev cancel "+id) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("switch mid-turn: want exit 3 in one line naming kandev cancel:\n%s", r)
	}
	if err := busy.Wait(); err != nil || !strings.Contains(out.String(), "slept") {
		t.Fatalf("the running turn: %v %s", err, out)
	}
	if w.session(id).Agent != "demo" || len(switchesIn(w.events(id))) != 0 {
		t.Fatal("a refused switch changed the agent")
	}
}

func TestSwitch_ToAnAgentThatFailsToStartKeepsTheSessionAndSwitchesBack(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	w.mustRun("switch", id, "--agent", "broken")
	r := w.run("prompt", id, "recall")
	if r.code != 6 || !strings.Contains(r.stderr, "broken") {
		t.Fatalf("a prompt to an agent that cannot start: want exit 6 naming it:\n%s", r)
	}
	s := w.session(id)
	if state.IsTerminal(s.State) || s.ErrorMessage == "" {
		t.Fatalf("the session must stay resumable and say why: %s %q", s.State, s.ErrorMessage)
	}
	if st := w.mustRun("status", id).stdout; !strings.Contains(st, "broken") {
		t.Fatalf("status:\n%s", st)
	}
	// The detached owner that tried to launch it ends on its own.
	waitFor(t, 30*time.Second, "the owner that failed to launch broken to exit", func() bool { return !w.ownerAlive(id) })
	w.mustRun("switch", id, "--agent", "demo")
	if got := w.recall(id); !strings.Contains(got, "APPLE") {
		t.Fatalf("back on demo it recalls %q", got)
	}
	// The prompt that never reached an agent is not lost silently: it is in the log once.
	assertSentOnce(t, w.events(id))
}

// TestSwitch_KilledBetweenTheRecordAndTheEventLeavesTheNewAgent cuts a
// switch after its record names the new agent and before its event is in
// the log: the session is on the new agent (never on none), and the next
// prompt writes the event once and recalls the word.
func TestSwitch_KilledBetweenTheRecordAndTheEventLeavesTheNewAgent(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id := rememberApple(w)
	reached := filepath.Join(t.TempDir(), "reached")
	cmd := exec.Command(kandevBin, "switch", id, "--agent", "plain")
	cmd.Dir = w.cwd
	cmd.Env = append(append([]string{}, w.env...), "KANDEV_FAILPOINT=agent-switch-recorded", "KANDEV_FAILPOINT_FILE="+reached)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the switch to reach its failpoint", func() bool { _, err := os.Stat(reached); return err == nil })
	cmd.Process.Kill()
	cmd.Wait()
	if s := w.session(id); s.Agent != "plain" || s.SwitchPending == nil {
		t.Fatalf("after the kill the record says agent %q, pending %+v", s.Agent, s.SwitchPending)
	}
	if len(switchesIn(w.events(id))) != 0 {
		t.Fatal("the event was written before the failpoint")
	}
	if st := w.mustRun("status", id).stdout; !strings.Contains(st, "plain") {
		t.Fatalf("status after the kill:\n%s", st)
	}
	if got := w.recall(id); !strings.Contains(got, "APPLE") {
		t.Fatalf("after the cut switch the agent recalls %q", got)
	}
	evs := w.events(id)
	if sw := switchesIn(evs); len(sw) != 1 || sw[0].To != "plain" {
		t.Fatalf("agent_switched after the next prompt: %+v", sw)
	}
	assertSentOnce(t, evs)
	assertNoSeqGap(t, evs)
	if w.session(id).SwitchPending != nil {
		t.Fatal("the pending switch was not cleared")
	}
}

func TestSwitch_SetupCarriesOverWhereOfferedAndWhatIsNotIsNamed(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id, r := w.start("--agent", "opts", "--model", "demo-large", "--mode", "code", "--set", "effort=high", "--set", "fast=on", "remember APPLE")
	mustOK(t, r)
	sw := w.mustRun("switch", id, "--agent", "plain")
	if !strings.Contains(sw.stdout, "setup carried over: ") || !strings.Contains(sw.stdout, "demo-large") {
		t.Fatalf("switch does not say what setup carries over:\n%s", sw)
	}
	p := w.mustRun("prompt", id, "/setup")
	if !strings.Contains(p.stdout, "mode: code, model: demo-large, options: effort=high") {
		t.Fatalf("plain does not run the carried setup:\n%s", p)
	}
	if !strings.Contains(p.stderr, "option fast") || strings.Count(p.stderr, "option fast") != 1 {
		t.Fatalf("what plain does not offer is not named in one line:\n%s", p)
	}
	var named int
	for _, e := range ofType(w.events(id), eventlog.EventMarker) {
		if e.Kind == "setup_not_offered" && strings.Contains(e.Summary, "fast") {
			named++
		}
	}
	if named != 1 {
		t.Fatalf("%d setup_not_offered markers name fast, want 1", named)
	}
	if s := w.session(id).Setup; s == nil || s.Model != "demo-large" || s.Mode != "code" || s.Options["effort"] != "high" || s.Options["fast"] != "" {
		t.Fatalf("the recorded setup is not what plain runs: %+v", s)
	}
}

// TestSwitch_ATurnCutOffByACrashIsRepairedAndNotContinuedByItself: the
// owner is killed mid-turn (CI: the owner is the prompt command itself);
// the switch repairs the turn and says the new agent does not continue it
// on its own; the next prompt runs on the new agent, which sees the cut
// request in the conversation.
func TestSwitch_ATurnCutOffByACrashIsRepairedAndNotContinuedByItself(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	w.underCI()
	id := rememberApple(w)
	cut, _ := w.background("prompt", id, "remember PLUM\n/sleep 5000")
	waitForRunningTurn(t, w, id)
	cut.Process.Kill()
	cut.Wait()
	r := w.mustRun("switch", id, "--agent", "plain")
	if !strings.Contains(r.stdout, "was cut off before the switch") {
		t.Fatalf("switch after a crash:\n%s", r)
	}
	got := w.recall(id)
	if !strings.Contains(got, "APPLE") || !strings.Contains(got, "PLUM") {
		t.Fatalf("plain recalls %q, want APPLE and the cut turn's PLUM", got)
	}
	evs := w.events(id)
	if n := len(ofSource(evs, eventlog.EventTurnStarted, eventlog.SourceContinuation)); n != 0 {
		t.Fatalf("%d continuation turns: the new agent must not continue the cut turn by itself", n)
	}
	assertSentOnce(t, evs)
}
