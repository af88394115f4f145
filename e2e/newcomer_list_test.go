package e2e_test

// What a newcomer tripped on, each as they met it: the command, its output,
// its exit code.

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestStatus_NextOfAParkedQuestionIsKandevAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "defer")
	if r := w.run("--permissions", "defer", "prompt", id, "/ask Which colour?"); r.code != 7 {
		t.Fatalf("a question under defer parks (exit 7): %s", r)
	}
	var st struct {
		Status struct {
			Next string `json:"next"`
		} `json:"status"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	if want := "kandev answer " + id + " VALUE"; st.Status.Next != want {
		t.Fatalf("status --json next is %q, want %q", st.Status.Next, want)
	}
	text := w.mustRun("status", id).stdout
	if !strings.Contains(text, "next      kandev answer "+id+" VALUE") || !strings.Contains(text, "kandev deny "+id) {
		t.Fatalf("status names kandev answer (and deny) next:\n%s", text)
	}
	// What it names works.
	if r := w.mustRun("answer", id, "blue"); !strings.Contains(r.stdout, "answered") {
		t.Fatalf("kandev answer: %s", r)
	}
}

func TestSearch_OnATerminalMarksTheMatchInColourAndStillEscapesTheAgentsControlCharacters(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The stored message carries an escape sequence of its own: it must reach
	// the terminal as visible text, never as a colour.
	w.start("--linger", "0", "remember PAPAYA \x1b[31mred")
	tm := newTmux(t, w, "env -u NO_COLOR "+kandevBin+" search PAPAYA")
	scr := tm.waitScreen("KANDEV-EXIT-")
	if !strings.Contains(scr, "KANDEV-EXIT-0") {
		t.Fatalf("search exit:\n%s", scr)
	}
	if strings.Contains(scr, `\x1b[1`) || strings.Contains(scr, `\x1b[0m`) {
		t.Fatalf("search printed its own colour codes as text:\n%s", scr)
	}
	if !strings.Contains(scr, `PAPAYA \x1b[31mred`) {
		t.Fatalf("the message's own escape sequence is not shown escaped:\n%s", scr)
	}
	// With the terminal's attributes: the match is painted (reverse video).
	painted := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name, "-S", "-200")
	if !strings.Contains(painted, "7mPAPAYA") {
		t.Fatalf("the match is not marked on the terminal:\n%q", painted)
	}
}

func TestResume_SaysTheSessionIsHeldForThePersonNotThatTheAgentIsAttached(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	check := func(what string, r result) {
		t.Helper()
		if r.code != 0 || strings.Contains(r.stdout, "attached to") || !strings.Contains(r.stdout, "held for you (ci:me) until ") ||
			!strings.Contains(r.stdout, "another holder needs --force") {
			t.Fatalf("%s: resume's last line does not say the session is held for the person, until when, and what that means:\n%s", what, r)
		}
	}
	// Warm: a live owner, nothing to relaunch.
	id := w.startWarm("60s", "remember KIWI")
	check("warm", w.run("resume", id, "--holder", "ci:me"))
	// Cold: resume restores the agent.
	w.mustRun("close", id)
	w.waitOwnerGone(id, 10*time.Second)
	check("cold", w.run("resume", id, "--holder", "ci:me", "--linger", "0"))
}

func TestList_ARunningSessionShowsNoStaleWarmUntilAndAStoppedOneNamesTheWarmAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember FIG")
	turn := w.runAsync("prompt", id, "/sleep 4000")
	waitFor(t, 15*time.Second, "the turn to run", func() bool { return w.session(id).State == "RUNNING" })
	row := listRowOf(t, w, id)
	if !strings.Contains(row, "running") || strings.Contains(row, "warm until") {
		t.Fatalf("a running session's row shows running and no warm-until (the last linger's, stale): %q", row)
	}
	var st struct {
		Status struct {
			Badge     string `json:"badge"`
			WarmUntil string `json:"warm_until"`
		} `json:"status"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	if st.Status.Badge != "running" || st.Status.WarmUntil != "" {
		t.Fatalf("status of a running turn: %+v", st.Status)
	}
	if r := <-turn; r.code != 0 {
		t.Fatal(r)
	}
	if row := listRowOf(t, w, id); !strings.Contains(row, "idle (warm until ") {
		t.Fatalf("an idle warm session: %q", row)
	}
	w.mustRun("stop", id)
	waitFor(t, 10*time.Second, "the owner to record the stop", func() bool { return w.session(id).Stopped })
	if row := listRowOf(t, w, id); !strings.Contains(row, "stopped (agent warm until ") {
		t.Fatalf("a stopped session whose agent is still warm: %q", row)
	}
}

// listRowOf is the row of kandev list that shows session id.
func listRowOf(t *testing.T, w *world, id string) string {
	t.Helper()
	for _, line := range strings.Split(w.mustRun("list").stdout, "\n") {
		if strings.HasPrefix(line, id) {
			return line
		}
	}
	t.Fatalf("kandev list does not show %s", id)
	return ""
}

func TestSet_AModelTheAgentDoesNotOfferSetWhileItIsStoppedIsNamedAtItsNextStart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember PLUM")
	w.mustRun("close", id)
	w.waitOwnerGone(id, 10*time.Second)
	w.mustRun("set", id, "--model", "gpt-5")
	// The next start, through the default path (a detached owner this prompt starts).
	r := w.mustRun("prompt", id, "recall")
	var lines []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "gpt-5") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "demo-small, demo-large") {
		t.Fatalf("the start that cannot apply the model set says so in one line naming what the agent offers:\n%s", r)
	}
	markers := 0
	for _, e := range ofType(w.events(id), "marker") {
		if e.Kind == "setup_not_offered" && strings.Contains(e.Summary, "gpt-5") {
			markers++
		}
	}
	if markers != 1 {
		t.Fatalf("%d setup_not_offered markers naming gpt-5, want 1", markers)
	}
}

func TestAgentsProbe_OfAnAgentThatNeverAnswersSaysItTimedOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	mute := writeScript(t, "mute-agent", "exec sleep 600\n")
	w.config("[agent]\nhandshake_timeout_seconds = 1\n\n[agents.mute]\ncommand = [\"" + mute + "\"]\n")
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			Capabilities json.RawMessage `json:"capabilities"`
			ProbeError   string          `json:"probe_error"`
		}
	}
	decodeJSON(t, w.mustRun("agents", "--probe", "--json").stdout, &out)
	found := false
	for _, a := range out.Agents {
		if a.Name == "mute" {
			found = true
			if !a.Installed || a.Capabilities != nil || !strings.Contains(a.ProbeError, "did not answer initialize within 1s (timed out") {
				t.Fatalf("the probe of an agent that never answers: %+v (capabilities %s)", a, a.Capabilities)
			}
		}
	}
	if !found {
		t.Fatal("kandev agents lists no mute agent")
	}
	text := w.mustRun("agents", "--probe").stdout
	if !strings.Contains(text, "probe failed: agent mute did not answer initialize within 1s") {
		t.Fatalf("agents --probe in text:\n%s", text)
	}
}

func TestAgentsProbe_OfAnAgentThatHangsUpSaysSoInWordsNotJSONRPC(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// It reads the initialize request and closes its stdout without an answer.
	deaf := writeScript(t, "deaf-agent", "exec cat >/dev/null\n")
	w.config("[agents.deaf]\ncommand = [\"" + deaf + "\"]\n")
	for _, args := range [][]string{{"agents", "--probe"}, {"doctor"}} {
		r := w.run(args...)
		said := false
		for _, l := range strings.Split(r.stdout, "\n") {
			said = said || strings.Contains(l, "deaf") && strings.Contains(l, "-32603 Internal error: peer disconnected")
		}
		if !said || strings.Contains(r.stdout, `{"code"`) {
			t.Fatalf("kandev %v: the agent's failure is not one readable line:\n%s", args, r)
		}
	}
}

func TestContainer_AStartWhoseEngineFailsLeavesDoctorAndCloseAllClean(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.Chmod(w.home, 0o700) // as kandev makes a home (doctor checks it)
	engine := writeScript(t, "failing-engine", "echo \"engine: cannot connect\" >&2\nexit 1\n")
	w.config("[runtime]\nengine = \"" + engine + "\"\nimage = \"none\"\n")
	id, r := w.start("--runtime", "container", "hello")
	if r.code == 0 || id == "" {
		t.Fatalf("a container start whose engine fails: %s", r)
	}
	if d := w.run("doctor"); d.code != 0 || strings.Contains(d.stdout, "FAIL") {
		t.Fatalf("doctor after one failed container start:\n%s", d)
	}
	if c := w.run("close", "--all"); c.code != 0 || strings.Contains(c.stderr, "warning") {
		t.Fatalf("close --all after one failed container start:\n%s", c)
	}
}
