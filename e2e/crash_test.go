package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// killAt runs kandev with --json and, as soon as trigger accepts a printed
// event line (or after timeout), crashes kandev: SIGKILL of that command and
// of every kandev process of the home (a detached or warm owner that ran
// its turn, its supervisor and agent), wherever the owner ran. It returns
// the events kandev had printed, i.e. acknowledged, before it died.
func (w *world) killAt(trigger func(e eventlog.Event) bool, timeout time.Duration, args ...string) []eventlog.Event {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, append([]string{"--json"}, args...)...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	var printed []eventlog.Event
	killed := make(chan struct{})
	timer := time.AfterFunc(timeout, func() { cmd.Process.Signal(syscall.SIGKILL) })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e eventlog.Event
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Seq == 0 {
				continue
			}
			printed = append(printed, e)
			if trigger(e) {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		close(killed)
	}()
	<-killed
	timer.Stop()
	cmd.Process.Signal(syscall.SIGKILL)
	w.killHome()
	cmd.Wait()
	return printed
}

// killHome SIGKILLs every process of the world's home (owners, followers,
// supervisors and agents alike) and waits until no owner or agent lock of
// the home is held.
func (w *world) killHome() {
	w.t.Helper()
	killHomeProcesses(w.home)
	h, err := state.OpenHome(w.home)
	if err != nil {
		return
	}
	all, _ := h.ListSessions()
	for _, s := range all {
		waitFor(w.t, 10*time.Second, "the killed owner's locks to be released", func() bool {
			alive, _ := h.OwnerAlive(s.ID)
			return !alive && !h.AgentAlive(s.ID)
		})
	}
}

// assertAcknowledgedKept checks every printed event is in the log unchanged.
func assertAcknowledgedKept(t *testing.T, printed, logged []eventlog.Event) {
	t.Helper()
	bySeq := map[int64]eventlog.Event{}
	for _, e := range logged {
		bySeq[e.Seq] = e
	}
	for _, p := range printed {
		l, ok := bySeq[p.Seq]
		if !ok || l.Type != p.Type || l.Content != p.Content {
			t.Fatalf("acknowledged event %d (%s) lost or changed: %+v", p.Seq, p.Type, l)
		}
	}
}

func continuations(evs []eventlog.Event) int {
	return len(continuationTurns(evs))
}

func isType(typ string) func(eventlog.Event) bool {
	return func(e eventlog.Event) bool { return e.Type == typ }
}

func TestCrash_KilledAtChosenPointsThenResumed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		agent        string
		prompt       string
		trigger      func(eventlog.Event) bool
		interrupted  bool
		unknownTools int
		// killAfter kills the command at that time when trigger has not
		// fired (0: a minute, a failure bound: the kill is the trigger's).
		killAfter time.Duration
	}{
		{"mid-stream", "slow", "/say one two three four five six seven eight", isType(eventlog.EventAgentMessage), true, 0, 0},
		{"during a tool call", "slow", "/read notes.txt", isType(eventlog.EventToolCall), true, 1, 0},
		{"during a sleep", "demo", "/say start\n/sleep 5000", isType(eventlog.EventAgentMessage), true, 0, 0},
		{"right after turn_ended", "demo", "/say done quickly", isType(eventlog.EventTurnEnded), false, 0, 0},
		// Killed before the agent answered initialize: no turn began, nothing to continue.
		{"during initialize", "slowstart", "/say hi", func(eventlog.Event) bool { return false }, false, 0, 1200 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			slowStart := writeScript(t, "slow-start", "sleep 2\nexec "+kandevBin+" demo-agent\n")
			w.config(`
[agents.slow]
command = ["` + kandevBin + `", "demo-agent", "--delay", "400"]
[agents.slowstart]
command = ["` + slowStart + `"]
`)
			os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("notes"), 0o644)
			// The session exists and is idle first, so the kill lands in a prompt.
			id, r := w.start("--agent", tc.agent)
			if r.code != 0 {
				t.Fatal(r)
			}
			// A fixed kill time landed anywhere on a loaded machine: after
			// the tool call had ended, once (CI).
			killAfter := tc.killAfter
			if killAfter == 0 {
				killAfter = time.Minute
			}
			printed := w.killAt(tc.trigger, killAfter, "prompt", id, tc.prompt)
			evs := w.events(id)
			assertNoSeqGap(t, evs)
			assertAcknowledgedKept(t, printed, evs)

			var st struct {
				Status struct {
					NeedsResume bool `json:"needs_resume"`
					Reason      string
					Badge       string
					Interrupted bool
				}
			}
			decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
			// docs/resume.md, the verdict: an active session with a token and no agent needs resume either way;
			// the badge and interrupted say whether a turn was cut off.
			if !st.Status.NeedsResume || st.Status.Reason != "agent_not_running" {
				t.Fatalf("verdict after the kill: %+v", st.Status)
			}
			if tc.interrupted && (st.Status.Badge != "needs-resume" || !st.Status.Interrupted) {
				t.Fatalf("verdict after an interrupted turn: %+v", st.Status)
			}
			if !tc.interrupted && (st.Status.Badge != "idle" || st.Status.Interrupted) {
				t.Fatalf("verdict without an interrupted turn: %+v", st.Status)
			}

			w.mustRun("resume", id)
			evs = w.events(id)
			assertNoSeqGap(t, evs)
			want := 0
			if tc.interrupted {
				want = 1
			}
			if n := continuations(evs); n != want {
				t.Fatalf("%d continuations, want %d", n, want)
			}
			unknown := 0
			for _, e := range ofType(evs, eventlog.EventToolResult) {
				if e.ToolStatus == "unknown" {
					unknown++
				}
			}
			if unknown != tc.unknownTools {
				t.Fatalf("%d unknown-outcome tool results, want %d", unknown, tc.unknownTools)
			}
			if tc.interrupted {
				ended := ofType(evs, eventlog.EventTurnEnded)
				if len(ended) < 2 || ended[len(ended)-2].StopReason != "shutdown" {
					t.Fatalf("interrupted turn not closed with shutdown: %+v", ended)
				}
			}
			// A second resume adds no continuation.
			w.mustRun("resume", id)
			if n := continuations(w.events(id)); n != want {
				t.Fatalf("second resume: %d continuations, want %d", n, want)
			}
			if s := w.session(id); s.State != state.StateWaitingForInput {
				t.Fatalf("state %s", s.State)
			}
		})
	}
}

func TestCrash_InitialPromptKilledBeforeAcceptanceIsSentAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	slowStart := writeScript(t, "slow-start", "sleep 2\nexec "+kandevBin+" demo-agent\n")
	w.config("[agents.slowstart]\ncommand = [\"" + slowStart + "\"]\n")
	// Killed once the session exists: its agent takes 2 s to start, so the
	// prompt has not been accepted (a fixed 700 ms came before the session
	// was made on a loaded machine, CI).
	h, _ := state.OpenHome(w.home)
	cmd := exec.Command(kandevBin, "start", "--agent", "slowstart", "remember GUAVA")
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the session to exist", func() bool {
		all, _ := h.ListSessions()
		return len(all) == 1
	})
	cmd.Process.Signal(syscall.SIGKILL)
	w.killHome()
	cmd.Wait()
	all, _ := h.ListSessions()
	if len(all) != 1 {
		t.Fatalf("%d sessions", len(all))
	}
	id := all[0].ID
	r := w.mustRun("resume", id)
	evs := w.events(id)
	if continuations(evs) != 0 || !strings.Contains(agentText(evs, ""), "remember GUAVA") {
		t.Fatalf("initial prompt not re-sent: %s\n%+v", r, evs)
	}
}

// A resume killed after it planned the continuation of an interrupted turn
// and before it wrote that continuation sent nothing: the next resume still
// owes the continuation and sends it, once (it was recorded as sent before
// it was, and lost, in 1 of 4 loaded crash-matrix runs of kandev acp).
func TestCrash_AResumeKilledBeforeItsContinuationLeavesItOwed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("remember KIWI")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	w.killAt(isType(eventlog.EventAgentMessage), 30*time.Second, "prompt", id, "/say start\n/sleep 5000\n/say end")
	arrived := filepath.Join(t.TempDir(), "arrived")
	resume := exec.Command(kandevBin, "resume", id)
	resume.Dir, resume.Env = w.cwd, append(append([]string{}, w.env...), "KANDEV_FAILPOINT=before-continuation", "KANDEV_FAILPOINT_FILE="+arrived)
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the resume to reach its continuation", func() bool {
		_, err := os.Stat(arrived)
		return err == nil
	})
	w.killHome() // the resume and the detached owner that holds the failpoint
	resume.Wait()
	if n := continuations(w.events(id)); n != 0 {
		t.Fatalf("%d continuations written before the failpoint", n)
	}
	w.mustRun("resume", id) // follows the continuation to its end
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after the next resume, want 1: the killed resume's was lost", n)
	}
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after another resume, want 1", n)
	}
}

func TestCrash_AgentCrashEndsTheTurnWithoutAContinuationLoop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("/say before\n/crash")
	if r.code != 6 {
		t.Fatal(r)
	}
	s := w.session(id)
	if s.StopReason != "process_exit" || s.State != state.StateWaitingForInput {
		t.Fatalf("record: %+v", s)
	}
	var st struct {
		Status struct {
			IsResumable bool `json:"is_resumable"`
			NeedsResume bool `json:"needs_resume"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if !st.Status.IsResumable {
		t.Fatal("session not resumable after the agent crashed")
	}
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 0 {
		t.Fatalf("%d continuations after an agent crash", n)
	}
	if r := w.run("prompt", id, "recall"); r.code != 0 {
		t.Fatalf("prompt after the crash: %s", r)
	}
}

func TestCrash_BudgetPausesTheFourthContinuationWithinTheWindow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[session.restart]\nmax_attempts = 3\nwindow_seconds = 15\n")
	id, _ := w.start()
	crash := func() {
		w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
	}
	for i := 1; i <= 3; i++ {
		crash()
		if r := w.run("resume", id); r.code != 0 {
			t.Fatalf("resume %d: %s", i, r)
		}
	}
	crash()
	r := w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "budget") {
		t.Fatalf("fourth resume: %s", r)
	}
	var st struct{ Status struct{ Badge string } }
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "paused" {
		t.Fatalf("badge %q", st.Status.Badge)
	}
	if n := continuations(w.events(id)); n != 3 {
		t.Fatalf("%d continuations, want 3", n)
	}
	// After the window the budget is back: the pause clears itself (status
	// says so and the log has an info marker) and the paused turn gets its
	// one continuation.
	time.Sleep(15 * time.Second)
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "needs-resume" || !hasMarker(w.events(id), "continuation_resumed", "budget has room") {
		t.Fatalf("after the window: badge %q", st.Status.Badge)
	}
	if r := w.run("resume", id); r.code != 0 {
		t.Fatalf("resume after the window: %s", r)
	}
	if n := continuations(w.events(id)); n != 4 {
		t.Fatalf("%d continuations, want 4", n)
	}
}

func TestCrash_AutoContinueOffRepairsWithoutContinuing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[session.restart]\nauto_continue = false\n")
	id, _ := w.start()
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
	w.mustRun("resume", id)
	evs := w.events(id)
	if continuations(evs) != 0 {
		t.Fatal("continued although auto_continue is off")
	}
	if last := lastOf(t, ofType(evs, eventlog.EventTurnEnded), "turn_ended in the log"); last.StopReason != "shutdown" {
		t.Fatalf("not repaired: %+v", last)
	}
}

func TestCrash_StoppedSessionIsNeverContinued(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
	r := w.mustRun("stop", id)
	if !strings.Contains(r.stdout, "stopped") {
		t.Fatal(r)
	}
	var st struct{ Status struct{ Badge string } }
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "stopped" {
		t.Fatalf("badge %q", st.Status.Badge)
	}
	w.mustRun("resume", id)
	evs := w.events(id)
	if continuations(evs) != 0 {
		t.Fatal("a stopped session was continued")
	}
	if last := lastOf(t, ofType(evs, eventlog.EventTurnEnded), "turn_ended in the log"); last.StopReason != "user_canceled" {
		t.Fatalf("stop reason %+v", last)
	}
}

func TestRepair_IsIdempotentAndDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	w.killAt(isType(eventlog.EventToolCall), 10*time.Second, "prompt", id, "/read missing.txt\n/sleep 5000")
	path := filepath.Join(w.home, "sessions", id+".jsonl")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":999,"type":"tor`)
	f.Close()
	before, _ := os.ReadFile(path)
	var dry struct {
		Repair struct {
			TornBytes int64  `json:"torn_bytes"`
			Turn      string `json:"interrupted_turn"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "repair", id, "--dry-run").stdout, &dry)
	if after, _ := os.ReadFile(path); string(after) != string(before) || dry.Repair.TornBytes == 0 || dry.Repair.Turn == "" {
		t.Fatalf("dry run: %+v changed=%v", dry, string(after) != string(before))
	}
	w.mustRun("repair", id)
	n := len(w.events(id))
	r := w.mustRun("repair", id)
	if len(w.events(id)) != n || !strings.Contains(r.stdout, "nothing to repair") {
		t.Fatalf("second repair appended events: %s", r)
	}
}

func TestRecover_ContinuesEveryInterruptedSessionOfTheWorkspace(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var ids []string
	for i := 0; i < 2; i++ {
		id, _ := w.start()
		w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
		ids = append(ids, id)
	}
	idle, _ := w.start()
	var out struct {
		Recovered []struct{ ID, Outcome string }
	}
	decodeJSON(t, w.mustRun("--json", "recover", "--all").stdout, &out)
	if len(out.Recovered) != 2 {
		t.Fatalf("recovered %+v", out.Recovered)
	}
	for _, id := range ids {
		if continuations(w.events(id)) != 1 {
			t.Fatalf("%s not continued", id)
		}
	}
	if continuations(w.events(idle)) != 0 {
		t.Fatal("an idle session was continued")
	}
}

func TestStart_ClosedStdoutPipeDoesNotKillTheOwner(t *testing.T) {
	t.Parallel()
	// The owner in the command (--linger 0) and a detached one it follows.
	for _, linger := range []string{"0", "300s"} {
		t.Run("linger "+linger, func(t *testing.T) {
			w := newWorld(t)
			cmd := exec.Command("sh", "-c", kandevBin+" start --linger "+linger+" '/say first\n/sleep 300\n/bulk 20000' | head -1")
			cmd.Dir, cmd.Env = w.cwd, w.env
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			id := strings.TrimSpace(string(out))
			waitFor(t, 30*time.Second, "the turn to end", func() bool {
				s := w.session(id)
				return s.State != state.StateRunning && s.CurrentTurn == ""
			})
			if s := w.session(id); s.StopReason != "end_turn" || s.State != state.StateWaitingForInput {
				t.Fatalf("record after head -1: %+v", s)
			}
		})
	}
}

func TestCrash_ChangedAgentCommandPausesTheContinuation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.mine]\ncommand = [\"" + kandevBin + "\", \"demo-agent\"]\n")
	id, _ := w.start("--agent", "mine")
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
	w.config("[agents.mine]\ncommand = [\"" + kandevBin + "\", \"demo-agent\", \"--no-load\"]\n")
	r := w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "command changed") {
		t.Fatalf("resume after the profile changed: %s", r)
	}
	if continuations(w.events(id)) != 0 {
		t.Fatal("continued with a different agent command")
	}
	if r := w.run("prompt", id, "/say carry on"); r.code != 0 {
		t.Fatalf("prompt after the pause: %s", r)
	}
}
