//go:build unix

package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// The command a person types is the session wherever its owner runs: in
// that command (--linger 0), in a detached owner that command starts (the
// default), or in a warm owner an earlier command left. Every signal,
// permission and exit-code rule is checked on each of the three, on the
// default settings (no CI, owners linger), through a real terminal where
// the rule is about one.

// ownerPlace is where the owner of the prompt's turn runs.
type ownerPlace struct {
	name string
	// session makes a session for the row and returns its id and the
	// prompt flags that put the owner there.
	session func(w *world) (id string, flags []string)
	// ownedHere: killing the command kills the owner (and its turn).
	ownedHere bool
}

var ownerPlaces = []ownerPlace{
	{name: "owner in this command", ownedHere: true, session: func(w *world) (string, []string) {
		return w.idleSession(), []string{"--linger", "0"}
	}},
	{name: "detached owner this command starts", session: func(w *world) (string, []string) {
		id := w.idleSession()
		w.closeOnCleanup(id)
		return id, nil
	}},
	{name: "warm owner an earlier command left", session: func(w *world) (string, []string) {
		id, r := w.start()
		if r.code != 0 {
			w.t.Fatal(r)
		}
		w.closeOnCleanup(id)
		if !w.ownerAlive(id) {
			w.t.Fatal("start on the default settings left no warm owner")
		}
		return id, nil
	}},
}

// defaultWorld is a machine on the default settings: no CI, owners linger.
func defaultWorld(t *testing.T) *world {
	w := newWorld(t)
	return w
}

// idleSession is a session waiting for input with no owner running.
func (w *world) idleSession() string {
	w.t.Helper()
	id, r := w.start("--linger", "0")
	if r.code != 0 {
		w.t.Fatal(r)
	}
	return id
}

// promptArgs is kandev prompt with the row's flags.
func promptArgs(id string, flags []string, text string) []string {
	return append(append([]string{"prompt"}, flags...), id, text)
}

// shellWords quotes args for sh.
func shellWords(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// inTerminal runs kandev args in a tmux terminal on the world's default
// settings; Ctrl-C reaches kandev, not the shell that reports its exit.
func (w *world) inTerminal(args ...string) *tmuxSession {
	return newTmux(w.t, w, "trap true INT; unset CI; "+kandevBin+" "+shellWords(args))
}

// terminalExit waits for the command in tm to exit and returns its exit code as shown.
func terminalExit(tm *tmuxSession) string {
	scr := tm.waitScreen("KANDEV-EXIT-")
	i := strings.Index(scr, "KANDEV-EXIT-")
	return strings.Fields(scr[i+len("KANDEV-EXIT-"):])[0]
}

// defaultPathRules are the signal, permission and exit-code rules of the
// command a person types; every one is run on every ownerPlace.
var defaultPathRules = []struct {
	name string
	// elsewhere: the rule is about an owner in another process only.
	elsewhere bool
	run       func(t *testing.T, w *world, place ownerPlace, id string, flags []string)
}{
	{name: "ask: y on the terminal allows", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		askOnTheTerminal(t, w, id, flags, "y")
	}},
	{name: "ask: n on the terminal denies", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		askOnTheTerminal(t, w, id, flags, "n")
	}},
	{name: "ask without a terminal denies with advice, exit 0", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		r := w.run(append([]string{"--permissions", "ask"}, promptArgs(id, flags, "/write out.txt nope")...)...)
		if r.code != 0 || !strings.Contains(r.stderr, "needs a terminal on stdin") {
			t.Fatalf("ask without a terminal: %s", r)
		}
		if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
			t.Fatal("ask mode without a terminal allowed the write")
		}
	}},
	{name: "a turn the agent ends cancelled by itself exits 0: nobody interrupted it", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		r := w.run(promptArgs(id, flags, "/say giving up\n/abort")...)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0 (the agent ended its own turn cancelled, as Codex does on a denied command)\n%s", r.code, r)
		}
		evs := w.events(id)
		if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopCancelled {
			t.Fatalf("the turn ended %q, want cancelled", stop)
		}
	}},
	{name: "Ctrl-C cancels the turn, exit 130, never continued", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		tm := w.inTerminal(promptArgs(id, flags, sleepingTurn)...)
		tm.waitScreen("working")
		tm.keys("C-c")
		if code := terminalExit(tm); code != "130" {
			t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
		}
		evs := w.events(id)
		turn := lastTurn(evs)
		if stop := turnEnd(evs, turn); stop != eventlog.StopCancelled {
			t.Fatalf("turn %s ended %q, want cancelled:\n%s", turn, stop, tm.screen())
		}
		time.Sleep(3500 * time.Millisecond) // past the sleep: a turn that ran on would say "after"
		if strings.Contains(agentText(w.events(id), turn), "after") {
			t.Fatal("the turn ran on after Ctrl-C")
		}
		w.mustRun("resume", id)
		if continuations(w.events(id)) != 0 {
			t.Fatal("a cancelled turn was continued")
		}
	}},
	{name: "kandev cancel or stop from another process ends the turn, exit 130", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		for _, how := range []string{"cancel", "stop"} {
			endedFromElsewhere(t, w, how, promptArgs(id, flags, sleepingTurn), func() string { return id })
		}
	}},
	{name: "Ctrl-C at the question cancels the turn, exit 130", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		tm := w.inTerminal(append([]string{"--permissions", "ask"}, promptArgs(id, flags, "/write out.txt never")...)...)
		tm.waitScreen("Allow Write out.txt? [y/N")
		tm.keys("C-c")
		if code := terminalExit(tm); code != "130" {
			t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
		}
		evs := w.events(id)
		if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopCancelled {
			t.Fatalf("turn ended %q, want cancelled:\n%s", stop, tm.screen())
		}
		if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
			t.Fatal("the write happened after Ctrl-C at its question")
		}
	}},
	{name: "SIGTERM interrupts the turn, exit 143, continued once", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, promptArgs(id, flags, sleepingTurn)...)
		if r.code != 143 {
			t.Fatalf("exit %d, want 143\n%s", r.code, r.result)
		}
		w.waitOwnerGone(id, 15*time.Second)
		evs := w.events(id)
		if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopShutdown {
			t.Fatalf("turn ended %q, want shutdown", stop)
		}
		w.mustRun("resume", "--linger", "0", id)
		if n := continuations(w.events(id)); n != 1 {
			t.Fatalf("%d continuations of the interrupted turn, want 1", n)
		}
	}},
	{name: "SIGHUP lets the turn run to its end, exit 0", run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGHUP}, promptArgs(id, flags, sleepingTurn)...)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s", r.code, r.result)
		}
		evs := w.events(id)
		turn := lastTurn(evs)
		if stop := turnEnd(evs, turn); stop != eventlog.StopEndTurn || !strings.Contains(agentText(evs, turn), "after") {
			t.Fatalf("turn ended %q with %q, want end_turn with the text after the sleep", stop, agentText(evs, turn))
		}
		if st := w.status(id); st.Status.Interrupted {
			t.Fatalf("status after SIGHUP: %+v", st.Status)
		}
	}},
	{name: "SIGKILL of the command leaves the turn to the owner", run: func(t *testing.T, w *world, place ownerPlace, id string, flags []string) {
		r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGKILL}, promptArgs(id, flags, sleepingTurn)...)
		if r.code != -1 {
			t.Fatalf("exit %d after SIGKILL\n%s", r.code, r.result)
		}
		if place.ownedHere {
			// The owner died with the command: the turn waits for resume.
			killSurvivors(w.home, id)
			if st := w.status(id); !st.Status.NeedsResume {
				t.Fatalf("status after SIGKILL of the owner: %+v", st.Status)
			}
			return
		}
		ownerCarriesTheTurn(t, w, id, "after")
	}},
	{name: "SIGKILL at the question leaves nobody to ask: denied, the turn goes on", elsewhere: true, run: func(t *testing.T, w *world, _ ownerPlace, id string, flags []string) {
		// exec: the pane's process is kandev itself.
		tm := newTmux(t, w, "unset CI; exec "+kandevBin+" "+shellWords(append([]string{"--permissions", "ask"}, promptArgs(id, flags, "/write out.txt never\n/say after the question")...)))
		tm.waitScreen("Allow Write out.txt? [y/N")
		pid, err := strconv.Atoi(strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{pane_pid}")))
		if err != nil {
			t.Fatal(err)
		}
		if err := kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		ownerCarriesTheTurn(t, w, id, "after the question")
		if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
			t.Fatal("the write happened with nobody left to ask")
		}
	}},
}

func TestDefaultPath_EveryRuleHoldsWhereverTheOwnerRuns(t *testing.T) {
	t.Parallel()
	for _, rule := range defaultPathRules {
		for _, place := range ownerPlaces {
			if rule.elsewhere && place.ownedHere {
				continue
			}
			t.Run(rule.name+"/"+place.name, func(t *testing.T) {
				w := defaultWorld(t)
				id, flags := place.session(w)
				rule.run(t, w, place, id, flags)
			})
		}
	}
}

// askOnTheTerminal sends a prompt under ask from a terminal, answers its
// question with answer and checks the write happened only on a y.
func askOnTheTerminal(t *testing.T, w *world, id string, flags []string, answer string) {
	tm := w.inTerminal(append([]string{"--permissions", "ask"}, promptArgs(id, flags, "/write out.txt from the terminal")...)...)
	// The same question wherever the owner runs (the demo agent offers
	// "always allow").
	tm.waitScreen("Allow Write out.txt? [y/N/always]")
	tm.keys(answer, "Enter")
	if code := terminalExit(tm); code != "0" {
		t.Fatalf("exit %s:\n%s", code, tm.screen())
	}
	_, err := os.Stat(filepath.Join(w.cwd, "out.txt"))
	if (err == nil) != (answer == "y") {
		t.Fatalf("answer %s: file written=%v\n%s", answer, err == nil, tm.screen())
	}
}

// ownerCarriesTheTurn waits for the last turn of id to end in its owner and
// checks it ran to its end (its text has want).
func ownerCarriesTheTurn(t *testing.T, w *world, id, want string) {
	waitFor(t, 15*time.Second, "the turn to end in its owner", func() bool {
		evs := w.eventsSoFar(id)
		return turnEnd(evs, lastTurn(evs)) != ""
	})
	evs := w.events(id)
	turn := lastTurn(evs)
	if stop := turnEnd(evs, turn); stop != eventlog.StopEndTurn || !strings.Contains(agentText(evs, turn), want) {
		t.Fatalf("turn ended %q with %q, want end_turn: the owner carries it", stop, agentText(evs, turn))
	}
}

func TestDefaultPath_AttachAsksAboutTheRequestsOfWhatItFollowsAndATypedYIsTheAnswer(t *testing.T) {
	t.Parallel()
	w := defaultWorld(t)
	id, _ := ownerPlaces[2].session(w)
	tm := w.inTerminal("--permissions", "ask", "attach", id)
	tm.waitScreen("Ctrl-C detaches")
	tm.keys("/write attached.txt from attach", "Enter")
	tm.waitScreen("Allow Write attached.txt? [y/N")
	tm.keys("y", "Enter")
	waitFor(t, 15*time.Second, "the write to be allowed", func() bool {
		_, err := os.Stat(filepath.Join(w.cwd, "attached.txt"))
		return err == nil
	})
	tm.keys("C-c")
	if code := terminalExit(tm); code != "0" {
		t.Fatalf("attach exit %s:\n%s", code, tm.screen())
	}
	for _, e := range ofType(w.events(id), eventlog.EventUserMessage) {
		if strings.TrimSpace(e.Content) == "y" {
			t.Fatal("the typed answer was sent to the agent as a message")
		}
	}
}

// startPlaces are where the owner of a new session's first turn runs.
var startPlaces = []struct {
	name  string
	flags []string
}{
	{"owner in this command", []string{"--linger", "0"}},
	{"detached owner this command starts", nil},
}

// newSessionID is the id of the only session of w's home.
func (w *world) newSessionID() string {
	w.t.Helper()
	m, _ := filepath.Glob(filepath.Join(w.home, "sessions", "*.json"))
	if len(m) != 1 {
		w.t.Fatalf("%d sessions, want 1", len(m))
	}
	id := strings.TrimSuffix(filepath.Base(m[0]), ".json")
	w.closeOnCleanup(id)
	return id
}

// endedFromElsewhere runs kandev args, ends its turn with kandev how
// (cancel or stop) from another process, and requires exit 130 and the
// turn's stop reason.
func endedFromElsewhere(t *testing.T, w *world, how string, args []string, session func() string) {
	t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := session()
	waitForRunningTurn(t, w, id)
	w.mustRun(how, id)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("kandev %s: %q exited %d, want 130\n%s", how, args[0], code, out.String())
	}
	want := map[string]string{"cancel": eventlog.StopCancelled, "stop": eventlog.StopUserCanceled}[how]
	if evs := w.events(id); turnEnd(evs, lastTurn(evs)) != want {
		t.Fatalf("kandev %s: the turn ended %q, want %s", how, turnEnd(evs, lastTurn(evs)), want)
	}
}

func TestDefaultPath_StartAsksAndCtrlCCancelsItsFirstTurnWhereverTheOwnerRuns(t *testing.T) {
	t.Parallel()
	for _, place := range startPlaces {
		t.Run(place.name+"/ask", func(t *testing.T) {
			w := defaultWorld(t)
			tm := w.inTerminal(append(append([]string{"--permissions", "ask", "start"}, place.flags...), "/write hello2.txt hi there")...)
			tm.waitScreen("Allow Write hello2.txt? [y/N")
			tm.keys("y", "Enter")
			if code := terminalExit(tm); code != "0" {
				t.Fatalf("exit %s:\n%s", code, tm.screen())
			}
			w.newSessionID()
			if _, err := os.Stat(filepath.Join(w.cwd, "hello2.txt")); err != nil {
				t.Fatalf("the approved write did not happen:\n%s", tm.screen())
			}
		})
		t.Run(place.name+"/ctrl-c", func(t *testing.T) {
			w := defaultWorld(t)
			tm := w.inTerminal(append(append([]string{"start"}, place.flags...), sleepingTurn)...)
			tm.waitScreen("working")
			tm.keys("C-c")
			if code := terminalExit(tm); code != "130" {
				t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
			}
			id := w.newSessionID()
			evs := w.events(id)
			if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopCancelled {
				t.Fatalf("first turn ended %q, want cancelled:\n%s", stop, tm.screen())
			}
		})
		for _, how := range []string{"cancel", "stop"} {
			t.Run(place.name+"/kandev "+how+" from another process", func(t *testing.T) {
				w := defaultWorld(t)
				endedFromElsewhere(t, w, how, append(append([]string{"start"}, place.flags...), sleepingTurn), func() string {
					waitFor(t, 15*time.Second, "the new session", func() bool {
						m, _ := filepath.Glob(filepath.Join(w.home, "sessions", "*.json"))
						return len(m) == 1
					})
					return w.newSessionID()
				})
			})
		}
	}
}

func TestDefaultPath_SurgeryOnAnIdleWarmSessionDoesNotWaitForTheLinger(t *testing.T) {
	t.Parallel()
	w := defaultWorld(t)
	id, r := w.start("remember PEAR")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	if !w.ownerAlive(id) {
		t.Fatal("no warm owner after start on the default settings")
	}
	w.mustRun("compact", id)
	w.mustRun("prompt", id, "/say warm again") // leaves a warm owner again
	w.mustRun("fork", id)
	w.mustRun("clear", id)
	w.mustRun("prompt", id, "/say warm once more")
	evs := w.events(id)
	var to int64
	for _, e := range ofType(evs, eventlog.EventTurnEnded) {
		to = e.Seq
	}
	w.mustRun("prompt", id, "/say one more turn")
	w.mustRun("rewind", id, "--to", strconv.FormatInt(to, 10))
}

func TestDefaultPath_ProgressLinesShowOnATerminalWhereverTheOwnerRuns(t *testing.T) {
	t.Parallel()
	for _, place := range startPlaces {
		t.Run(place.name, func(t *testing.T) {
			w := defaultWorld(t)
			tm := w.inTerminal(append(append([]string{"start"}, place.flags...), "/say hi")...)
			tm.waitScreen("launching demo agent")
			tm.waitScreen("initializing agent")
			if code := terminalExit(tm); code != "0" {
				t.Fatalf("exit %s:\n%s", code, tm.screen())
			}
			w.newSessionID()
		})
	}
	t.Run("queued behind a running turn", func(t *testing.T) {
		w := defaultWorld(t)
		id, _ := ownerPlaces[2].session(w)
		busy := exec.Command(kandevBin, "prompt", id, sleepingTurn)
		busy.Dir, busy.Env = w.cwd, w.env
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		defer busy.Wait()
		waitForRunningTurn(t, w, id)
		tm := w.inTerminal("prompt", id, "/say second")
		tm.waitScreen("queued behind the running turn in " + id)
		if code := terminalExit(tm); code != "0" {
			t.Fatalf("exit %s:\n%s", code, tm.screen())
		}
	})
}

func TestDefaultPath_CtrlCOfAPromptQueuedBehindAnotherTurnLeavesThatTurnAlone(t *testing.T) {
	t.Parallel()
	w := defaultWorld(t)
	id, _ := ownerPlaces[2].session(w)
	busy := exec.Command(kandevBin, "prompt", id, sleepingTurn)
	busy.Dir, busy.Env = w.cwd, w.env
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	waitForRunningTurn(t, w, id)
	other := lastTurn(w.eventsSoFar(id))
	tm := w.inTerminal("prompt", id, "/say never shown")
	tm.waitScreen("queued behind the running turn in " + id)
	tm.keys("C-c")
	if code := terminalExit(tm); code != "130" {
		t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
	}
	if err := busy.Wait(); err != nil {
		t.Fatalf("the other command's turn was disturbed: %v", err)
	}
	evs := w.events(id)
	if stop := turnEnd(evs, other); stop != eventlog.StopEndTurn || !strings.Contains(agentText(evs, other), "after") {
		t.Fatalf("the running turn ended %q: a Ctrl-C of the prompt queued behind it cancelled it", stop)
	}
	waitFor(t, 15*time.Second, "the queued prompt's turn to end", func() bool {
		evs := w.eventsSoFar(id)
		return lastTurn(evs) != other && turnEnd(evs, lastTurn(evs)) != ""
	})
	evs = w.events(id)
	if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopCancelled {
		t.Fatalf("the cancelled prompt's turn ended %q, want cancelled", stop)
	}
}

// interruptedSession is a session whose owner was killed mid-turn, on an
// agent slow enough that the continuation a resume sends runs for seconds
// (each line of the quoted request comes back after a delay).
func (w *world) interruptedSession() string {
	return w.interruptedSessionOf("slow")
}

// interruptedSessionOf is interruptedSession on agent profile agent: slow
// (each update after 600 ms), or slowboot (slow, and 2 s to launch).
func (w *world) interruptedSessionOf(agent string) string {
	w.t.Helper()
	boot := writeScript(w.t, "slow-boot", "sleep 2\nexec "+kandevBin+" demo-agent --delay 600\n")
	w.config("[agents.slow]\ncommand = [\"" + kandevBin + "\", \"demo-agent\", \"--delay\", \"600\"]\n[agents.slowboot]\ncommand = [\"" + boot + "\"]\n")
	id, r := w.start("--linger", "0", "--agent", agent)
	if r.code != 0 {
		w.t.Fatal(r)
	}
	w.closeOnCleanup(id)
	if r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGKILL}, "prompt", "--linger", "0", id, sleepingTurn); r.code != -1 {
		w.t.Fatalf("exit %d after SIGKILL\n%s", r.code, r.result)
	}
	killSurvivors(w.home, id)
	if st := w.status(id); !st.Status.NeedsResume {
		w.t.Fatalf("status after SIGKILL of the owner: %+v", st.Status)
	}
	return id
}

// continuationStop is how the newest continuation of session id ended.
func continuationStop(evs []eventlog.Event) (turn, stop string) {
	if c := continuationTurns(evs); len(c) > 0 {
		turn = c[len(c)-1].TurnID
	}
	return turn, turnEnd(evs, turn)
}

func TestDefaultPath_ResumeCtrlCCancelsAndSIGTERMInterruptsTheContinuationWhereverTheOwnerRuns(t *testing.T) {
	t.Parallel()
	for _, place := range startPlaces {
		t.Run(place.name+"/ctrl-c", func(t *testing.T) {
			w := defaultWorld(t)
			id := w.interruptedSession()
			tm := w.inTerminal(append(append([]string{"resume"}, place.flags...), id)...)
			tm.waitScreen("echo: The previous turn")
			tm.keys("C-c")
			if code := terminalExit(tm); code != "130" {
				t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
			}
			turn, stop := continuationStop(w.events(id))
			if stop != eventlog.StopCancelled {
				t.Fatalf("continuation %s ended %q, want cancelled:\n%s", turn, stop, tm.screen())
			}
			w.mustRun("resume", id)
			if n := continuations(w.events(id)); n != 1 {
				t.Fatalf("%d continuations, want 1: a cancelled continuation was continued again", n)
			}
		})
		t.Run(place.name+"/ctrl-c before the continuation is sent", func(t *testing.T) {
			w := defaultWorld(t)
			id := w.interruptedSessionOf("slowboot")
			tm := w.inTerminal(append(append([]string{"resume"}, place.flags...), id)...)
			tm.waitScreen("launching slowboot agent")
			tm.keys("C-c")
			if code := terminalExit(tm); code != "130" {
				t.Fatalf("exit %s, want 130:\n%s", code, tm.screen())
			}
			w.mustRun("resume", id)
			evs := w.events(id)
			if turn, stop := continuationStop(evs); turn != "" && (stop != eventlog.StopCancelled || agentText(evs, turn) != "") {
				t.Fatalf("continuation %s after Ctrl-C during the launch ended %q with %q, want cancelled before it was sent", turn, stop, agentText(evs, turn))
			}
			if n := continuations(evs); n > 1 {
				t.Fatalf("%d continuations", n)
			}
		})
		t.Run(place.name+"/sigterm", func(t *testing.T) {
			w := defaultWorld(t)
			id := w.interruptedSession()
			r := w.signalMidTurn(id, nil, []syscall.Signal{syscall.SIGTERM}, append(append([]string{"resume"}, place.flags...), id)...)
			if r.code != 143 {
				t.Fatalf("exit %d, want 143\n%s", r.code, r.result)
			}
			w.waitOwnerGone(id, 15*time.Second)
			if turn, stop := continuationStop(w.events(id)); stop != eventlog.StopShutdown {
				t.Fatalf("continuation %s ended %q, want shutdown", turn, stop)
			}
		})
	}
}
