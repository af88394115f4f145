package e2e_test

// Warm prompts on real agents: the same conversation served cold (the agent
// started and its session restored for the prompt) and warm (a lingering
// owner that the prompt reattaches to). The tests assert behaviour only and
// log the figures; docs/figures.md quotes their medians.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
)

// promptFigures are one prompt command's wall time, the agent's own turn
// (turn_started to turn_ended in the log) and the time from turn_ended to
// the command's exit.
type promptFigures struct{ wall, turn, tail time.Duration }

func (f promptFigures) String() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return "wall " + ms(f.wall) + ", agent's turn " + ms(f.turn) + ", turn_ended to exit " + ms(f.tail)
}

// timedPrompt runs `kandev prompt id text args...`, requires exit 0 and the
// agent's answer to name text, and measures it.
func timedPrompt(w *world, id, text string, args ...string) promptFigures {
	w.t.Helper()
	began := time.Now()
	res := w.run(append([]string{"prompt", id, text}, args...)...)
	exited := time.Now()
	if res.code != 0 {
		w.t.Fatalf("prompt %q: %s", text, res)
	}
	evs := w.events(id)
	turn := lastTurn(evs)
	if got := agentText(evs, turn); !strings.Contains(got, text) {
		w.t.Fatalf("the answer to %q did not arrive: %q\n%s\n%s", text, got, res, mustJSON(ofType(evs, eventlog.EventMarker, eventlog.EventAgentStarted)))
	}
	var started, ended time.Time
	for _, e := range evs {
		if e.TurnID != turn {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			w.t.Fatalf("event %d: timestamp %q: %v", e.Seq, e.Timestamp, err)
		}
		switch e.Type {
		case eventlog.EventTurnStarted:
			started = at
		case eventlog.EventTurnEnded:
			ended = at
		}
	}
	if started.IsZero() || ended.IsZero() || started.Before(began) {
		w.t.Fatalf("turn %s of prompt %q: started %v, ended %v (command began %v)", turn, text, started, ended, began)
	}
	return promptFigures{wall: exited.Sub(began), turn: ended.Sub(started), tail: exited.Sub(ended)}
}

// medianFigures is the median of each figure on its own.
func medianFigures(fs []promptFigures) promptFigures {
	median := func(pick func(promptFigures) time.Duration) time.Duration {
		ds := make([]time.Duration, len(fs))
		for i, f := range fs {
			ds[i] = pick(f)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	return promptFigures{
		wall: median(func(f promptFigures) time.Duration { return f.wall }),
		turn: median(func(f promptFigures) time.Duration { return f.turn }),
		tail: median(func(f promptFigures) time.Duration { return f.tail }),
	}
}

// warmRig is how warmAgainstCold drives one agent.
type warmRig struct {
	agent string
	// noneLeft fails the test while any of the agent's processes is running.
	noneLeft func(after string)
	// beforeRestore, if not nil, runs before each prompt that restores the agent.
	beforeRestore func(id string)
	// restoresOnce: the agent loads a session only once (Gemini CLI), so
	// there is no separate cold prompt; the first lingering prompt, which
	// restores the agent just as a cold one does, gives the cold figure.
	restoresOnce bool
}

// warmAgainstCold drives one session on an agent through a cold prompt, a
// lingering one and three warm ones, each in a new process, then closes it.
func warmAgainstCold(t *testing.T, w *world, r warmRig) {
	agent := r.agent
	w.underCI() // the cold figures need each command to own its turn; the warm half asks for --linger
	id, res := w.start("--agent", agent, "remember the word PAPAYA for later")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.noneLeft("start exited")
	restore := func() {
		if r.beforeRestore != nil {
			r.beforeRestore(id)
		}
	}

	var cold promptFigures
	if !r.restoresOnce {
		restore()
		cold = timedPrompt(w, id, "cold prompt about figs")
		r.noneLeft("the cold prompt exited")
		exits := ofType(w.events(id), eventlog.EventAgentExited)
		t.Logf("%s cold prompt: %s; the agent %s", agent, cold, exits[len(exits)-1].Content)
	}

	w.closeOnCleanup(id)
	restore()
	first := timedPrompt(w, id, "first lingering prompt about pears", "--linger", "60s")
	t.Logf("%s first prompt with --linger 60s: %s", agent, first)
	if r.restoresOnce {
		cold = first
	}
	if !w.ownerAlive(id) {
		t.Fatal("prompt --linger returned but no owner stayed behind")
	}
	starts := len(ofType(w.events(id), eventlog.EventAgentStarted))

	var warm []promptFigures
	for _, fruit := range []string{"plums", "limes", "dates"} {
		f := timedPrompt(w, id, "warm prompt about "+fruit)
		t.Logf("%s warm prompt: %s", agent, f)
		warm = append(warm, f)
	}
	if n := len(ofType(w.events(id), eventlog.EventAgentStarted)); n != starts {
		t.Fatalf("%d agent_started events after the warm prompts, want %d: warm prompts must reattach", n, starts)
	}
	if !w.ownerAlive(id) {
		t.Fatal("the warm owner exited after serving; it should linger")
	}
	m := medianFigures(warm)
	t.Logf("%s median warm prompt: %s; warm wall is %.2fx the cold one, %s over the agent's turn",
		agent, m, float64(m.wall)/float64(cold.wall), (m.wall - m.turn).Round(time.Millisecond))

	w.mustRun("close", id)
	w.waitOwnerGone(id, 20*time.Second)
	r.noneLeft("close")
	if left := proc.TaggedProcesses(w.home)[id]; len(left) > 0 {
		t.Fatalf("processes outlived close: %+v", left)
	}
}

func TestClaude_WarmPromptsReattachToTheLingeringAdapter(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	warmAgainstCold(t, r.world, warmRig{agent: "claude", noneLeft: r.assertNoAgentSurvives})
}

func TestCodex_WarmPromptsReattachToTheLingeringAdapter(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	warmAgainstCold(t, r.world, warmRig{agent: "codex", noneLeft: r.assertNoAgentSurvives})
}

func TestGemini_WarmPromptsReattachToTheLingeringAgent(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	// Gemini CLI 0.61.0 loads a session in a minute after the one it was
	// saved in (kandev falls back to a fresh one with the history before),
	// and only once: its load writes a new file for the session, and the
	// next load answers "No previous sessions found".
	warmAgainstCold(t, r.world, warmRig{agent: geminiAgent, noneLeft: r.assertNoAgentSurvives, restoresOnce: true,
		beforeRestore: func(id string) {
			evs := r.events(id)
			waitForNextMinute(eventTime(t, evs[len(evs)-1]))
		}})
}

func TestOpenCode_WarmPromptsReattachToTheLingeringAgent(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	warmAgainstCold(t, r.world, warmRig{agent: r.name, noneLeft: func(after string) { r.assertNoAgentSurvives("", after) }})
}

func TestCopilot_WarmPromptsReattachToTheLingeringAgent(t *testing.T) {
	t.Parallel()
	r := newCopilotRig(t)
	warmAgainstCold(t, r.world, warmRig{agent: r.name, noneLeft: func(after string) { r.assertNoAgentSurvives("", after) }})
}
