package e2e_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// The newcomer's breaks of issue 33: each test below drives the built binary
// the way a person new to kandev did when they found the break.

func TestLatest_AnImportedCopyNeverTiesWithItsOriginal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1") // nothing lingers
	orig, r := w.start("remember COPY")
	if r.code != 0 {
		t.Fatal(r)
	}
	bundle := w.mustRun("export", "--latest")
	r = w.runInput(bundle.stdout, "import", "-")
	if r.code != 0 {
		t.Fatalf("import: %s", r)
	}
	copyID := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if copyID == orig || copyID == "" {
		t.Fatalf("import gave id %q (original %s)", copyID, orig)
	}
	// Twice, so a lucky order cannot pass: the choice is the same each time,
	// and it is the row list shows first.
	for i := 0; i < 2; i++ {
		r = w.run("status", "--latest")
		if r.code != 0 {
			t.Fatalf("status --latest after an import into the same home: %s", r)
		}
		if !strings.Contains(r.stderr, "session "+copyID) {
			t.Fatalf("--latest did not pick the imported copy %s:\n%s", copyID, r)
		}
	}
	list := w.mustRun("list")
	if !strings.Contains(strings.SplitN(list.stdout, "\n", 3)[1], copyID) {
		t.Fatalf("list's first row is not the copy --latest picked:\n%s", list.stdout)
	}
	r = w.run("prompt", "--latest", "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "COPY") {
		t.Fatalf("prompt --latest on the copy: %s", r)
	}
}

func TestSet_AValueTheRunningAgentDoesNotOfferIsAUsageErrorAndIsNotRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--linger", "30s", "--model", "demo-large", "remember FIG")
	mustOK(t, r)
	defer w.run("close", id)
	if !w.ownerAlive(id) {
		t.Fatal("no warm owner after start --linger 30s")
	}
	r = w.run("set", id, "--model", "gpt-5")
	if r.code != 2 {
		t.Fatalf("set --model gpt-5 on a demo agent: want exit 2, %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "gpt-5") || !strings.Contains(lines[0], "demo-small, demo-large") {
		t.Fatalf("want one line naming what the agent offers: %s", r)
	}
	if strings.Contains(r.stdout, "already runs") {
		t.Fatalf("set claims the agent runs with what it refused: %s", r)
	}
	marks := 0
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" && strings.Contains(m.Summary, "gpt-5") {
			marks++
		}
	}
	if marks != 1 {
		t.Fatalf("%d setup_not_offered markers naming gpt-5, want 1", marks)
	}
	st := w.mustRun("status", id)
	if strings.Contains(st.stdout, "gpt-5") || !strings.Contains(st.stdout, "model demo-large") {
		t.Fatalf("status does not show what the agent runs:\n%s", st.stdout)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "model: demo-large") {
		t.Fatalf("the agent does not run demo-large: %s", r)
	}

	// What it offers still applies, and a mix says both, still exit 2.
	r = w.run("--json", "set", id, "--model", "demo-small", "--mode", "plan")
	if r.code != 2 || !strings.Contains(r.stdout, `"error"`) || !strings.Contains(r.stderr, "mode plan") {
		t.Fatalf("set --model demo-small --mode plan: %s", r)
	}
	if st := w.mustRun("status", id); !strings.Contains(st.stdout, "model demo-small") || strings.Contains(st.stdout, "plan") {
		t.Fatalf("status after a half-taken set:\n%s", st.stdout)
	}
}

func TestStart_ThatCannotLaunchItsAgentPrintsNoSessionIDOnlyTheErrorNamingIt(t *testing.T) {
	t.Parallel()
	for _, linger := range []string{"0", "30s"} { // the owner in this command, a detached owner
		t.Run("linger "+linger, func(t *testing.T) {
			w := newWorld(t)
			w.config("[agents.x]\ncommand = [\"kandev-no-such-agent-xyz\"]\ninstall_hint = \"install x from its site\"\n")
			r := w.run("start", "--linger", linger, "--agent", "x", "hi")
			if r.code != 6 {
				t.Fatalf("exit %d, want 6\n%s", r.code, r)
			}
			if r.stdout != "" {
				t.Fatalf("a start whose agent cannot launch printed %q on stdout (a script takes it for a session)", r.stdout)
			}
			var list struct{ Sessions []struct{ ID, State string } }
			decodeJSON(t, w.mustRun("--json", "list").stdout, &list)
			if len(list.Sessions) != 1 || list.Sessions[0].State != state.StateFailed {
				t.Fatalf("want one FAILED session: %+v", list.Sessions)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "session "+list.Sessions[0].ID+" is FAILED") || !strings.Contains(lines[0], "install x from its site") {
				t.Fatalf("want one line naming the failed session and what to do:\n%s", r.stderr)
			}
		})
	}
}

func TestQuiet_StartPromptAndResumePrintTheFinalAssistantText(t *testing.T) {
	t.Parallel()
	for _, linger := range []string{"0", "30s"} {
		t.Run("linger "+linger, func(t *testing.T) {
			w := newWorld(t)
			r := w.run("-q", "start", "--linger", linger, "/say FINAL START")
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.code != 0 || len(lines) != 2 || lines[1] != "FINAL START" {
				t.Fatalf("start -q: want the id, then the final assistant text only: %s", r)
			}
			id := lines[0]
			defer w.run("close", id)
			if r.stderr != "" {
				t.Fatalf("start -q wrote on stderr: %q", r.stderr)
			}
			r = w.run("-q", "prompt", id, "--linger", linger, "/say FINAL PROMPT")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "FINAL PROMPT" || r.stderr != "" {
				t.Fatalf("prompt -q: %s", r)
			}
			// An id alone is still what -q start prints when there is no prompt.
			r = w.run("-q", "start", "--linger", linger)
			if r.code != 0 || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 || r.stderr != "" {
				t.Fatalf("start -q without a prompt: want the id alone: %s", r)
			}
			// resume -q: nothing to continue prints nothing; a continuation prints its final text.
			w.mustRun("close", id)
			w.waitOwnerGone(id, 10*time.Second)
			if r = w.run("-q", "resume", id, "--linger", linger); r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("resume -q with nothing to continue: %s", r)
			}
			w.mustRun("close", id)
			w.waitOwnerGone(id, 10*time.Second)
			done := w.runAsync("prompt", id, "--linger", "0", "/say before\n/sleep 6000")
			waitFor(t, 20*time.Second, "the turn to stream", func() bool { return strings.Contains(agentText(w.eventsSoFar(id), ""), "before") })
			if err := kill(w.session(id).OwnerPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			w.waitOwnerGone(id, 10*time.Second)
			r = w.run("-q", "resume", id, "--linger", linger)
			evs := w.events(id)
			if want := strings.TrimSpace(agentText(evs, lastTurn(evs))); r.code != 0 || want == "" || strings.TrimSpace(r.stdout) != want {
				t.Fatalf("resume -q of an interrupted turn: want the continuation's text %q: %s", want, r)
			}
		})
	}
}

// runAsync starts kandev and returns a channel with its result.
func (w *world) runAsync(args ...string) <-chan result {
	done := make(chan result, 1)
	go func() { done <- w.run(args...) }()
	return done
}

func TestPrompt_WhoseOwnerIsKilledMidTurnShowsTheContinuationItGets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		warm bool // the owner is a warm one an earlier command left, else one this prompt starts detached
		// off: automatic continuation is off, so the prompt says the turn is not continued
		off bool
	}{
		{"warm owner left by an earlier command", true, false},
		{"detached owner this prompt started", false, false},
		{"warm owner, automatic continuation off", true, true},
		{"no linger: the owner is the start command that queued nothing", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.off {
				w.config("[session.restart]\nauto_continue = false\n")
			}
			var id string
			linger := "60s"
			if strings.HasPrefix(tc.name, "no linger") {
				// The owner runs in the foreground start; this prompt queues behind its first turn.
				w.env = append(w.env, "CI=1")
				linger = "0"
				startDone := w.runAsync("start", "/sleep 1500")
				waitFor(t, 20*time.Second, "the start's owner", func() bool {
					h, _ := state.OpenHome(w.home)
					all, _ := h.ListSessions()
					return len(all) == 1 && w.ownerAlive(all[0].ID)
				})
				h, _ := state.OpenHome(w.home)
				all, _ := h.ListSessions()
				id = all[0].ID
				defer func() { <-startDone }()
			} else if tc.warm {
				id = w.startWarm("60s", "remember KIWI")
			} else {
				var r result
				id, r = w.start("--linger", "0", "remember KIWI")
				mustOK(t, r)
				w.closeOnCleanup(id)
			}
			done := w.runAsync("prompt", id, "--linger", linger, "/say before\n/sleep 4000\n/say after")
			waitFor(t, 20*time.Second, "the turn to stream its first words", func() bool {
				return strings.Contains(agentText(w.eventsSoFar(id), ""), "before")
			})
			if err := kill(w.session(id).OwnerPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the prompt did not end after its owner was killed")
			}
			if tc.off {
				if r.code != 1 || !strings.Contains(r.stderr, "not continued") || !strings.Contains(r.stderr, "kandev recap "+id) {
					t.Fatalf("a cut-off turn that is not continued: want exit 1 saying so: %s", r)
				}
				return
			}
			evs := w.events(id)
			var cont string
			for _, e := range ofType(evs, eventlog.EventTurnStarted) {
				if e.Source == eventlog.SourceContinuation {
					cont = e.TurnID
				}
			}
			if cont == "" {
				t.Fatalf("the killed turn was not continued: %s", r)
			}
			if r.code != 0 || strings.Contains(r.stderr, "run kandev resume") {
				t.Fatalf("the prompt blames the user for a turn that was continued: %s", r)
			}
			if want := strings.TrimSpace(agentText(evs, cont)); want == "" || !strings.Contains(r.stdout, want) {
				t.Fatalf("the continuation's answer was not shown (want %q):\n%s", want, r)
			}
			if !strings.Contains(r.stderr, "continu") {
				t.Fatalf("nothing says the turn was cut off and continued:\n%s", r.stderr)
			}
			// Nothing is left for a resume to continue.
			if st := w.status(id); st.Status.Badge != verdict.BadgeIdle {
				t.Fatalf("status after the prompt: %+v", st.Status)
			}
		})
	}
}

func TestStopAndResume_OnAWarmIdleSessionSayWhatTheyDid(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "remember KIWI")

	r := w.mustRun("resume", id)
	if strings.Contains(r.stdout, "running in another kandev process") && !strings.Contains(r.stdout, "idle") ||
		!strings.Contains(r.stdout, "nothing to continue") || !strings.Contains(r.stdout, "kandev prompt "+id) {
		t.Fatalf("resume of a warm idle session does not say the agent is warm and idle, nothing to continue, how to prompt:\n%s", r)
	}

	r = w.mustRun("stop", id)
	if strings.Contains(r.stdout, "will end the running turn") || !strings.Contains(r.stdout, "no turn was running") ||
		!strings.Contains(r.stdout, "kandev close "+id) {
		t.Fatalf("stop of a warm idle session does not say what it did:\n%s", r)
	}
	waitFor(t, 10*time.Second, "the owner to record the stop", func() bool { return w.session(id).Stopped })

	// A cold session: resume restores it and says what now.
	w.mustRun("close", id)
	w.waitOwnerGone(id, 10*time.Second)
	r = w.mustRun("resume", id, "--linger", "30s")
	if !strings.Contains(r.stdout, "restored") || !strings.Contains(r.stdout, "warm") || !strings.Contains(r.stdout, "nothing to continue") ||
		!strings.Contains(r.stdout, "kandev prompt "+id) {
		t.Fatalf("resume of a cold idle session does not say what happened and what next:\n%s", r)
	}
}
