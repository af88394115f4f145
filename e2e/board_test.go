//go:build unix

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
)

// boardHome fills the world's home with a session in every column of the
// board, and a record cut off mid-write; it returns the ids by title.
func boardHome(t *testing.T, w *world) map[string]string {
	t.Helper()
	w.config("[agents.broken]\ncommand = [\"/nonexistent/agent\"]\n")
	ids := map[string]string{}
	// First: making an interrupted turn kills every process of the home.
	ids["crashed"] = w.mustStart("--title", "crashed", "--linger", "0")
	w.crashMidTurn(ids["crashed"])
	ids["broken"], _ = w.start("--title", "broken", "--agent", "broken")
	ids["idle"] = w.mustStart("--title", "idle", "--linger", "0", "/say hello")
	ids["finished"] = w.mustStart("--title", "finished", "--linger", "0")
	w.mustRun("done", ids["finished"])
	if r := w.run("--permissions", "defer", "start", "--title", "wants to write", "/write out.txt from the board"); r.code != 7 {
		t.Fatalf("a parked write exits 7: %s", r)
	}
	ids["wants to write"] = w.onlyNew(ids)
	ids["busy"] = w.mustStart("--title", "busy", "--linger", "0")
	w.busyTurnWith(ids["busy"], "/say working\n/sleep 30000")
	torn := filepath.Join(w.home, "sessions", "20261207-000000-deadbeef.json")
	if err := os.WriteFile(torn, []byte(`{"format": 1, "id": "20261207-0000`), 0o600); err != nil {
		t.Fatal(err)
	}
	return ids
}

// onlyNew is the one session of the home not among known.
func (w *world) onlyNew(known map[string]string) string {
	w.t.Helper()
	for _, id := range w.sessions() {
		found := false
		for _, k := range known {
			found = found || k == id
		}
		if !found {
			return id
		}
	}
	w.t.Fatal("no new session")
	return ""
}

// normalBoard is board text with what changes from run to run replaced:
// ids, the workspace's name, ages and times of day; cells one space apart.
func normalBoard(w *world, text string) string {
	text = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{8}`).ReplaceAllString(text, "ID")
	text = regexp.MustCompile(`\b`+regexp.QuoteMeta(filepath.Base(w.cwd))+`\b`).ReplaceAllString(text, "WS")
	text = strings.ReplaceAll(text, w.home, "HOME")
	text = regexp.MustCompile(`\b\d+[smhd]\b`).ReplaceAllString(text, "AGE")
	text = regexp.MustCompile(`\b\d\d:\d\d\b`).ReplaceAllString(text, "HH:MM")
	return regexp.MustCompile(`  +`).ReplaceAllString(text, "  ")
}

const boardOnceGolden = `Needs you (3)
  ID  permission: Write out.txt  demo  WS  AGE  -  wants to write
  ID  failed: agent not installed: /nonexistent/agent was not found on PA…  broken  WS  AGE  -  broken
  ID  unreadable record  -  -  -  -  session record HOME/sessions/ID.json is corrupt: unexpected end of JSON input; run kandev doctor
Running (1)
  ID  running  demo  WS  AGE  -  busy
Needs resume (1)
  ID  needs-resume  demo  WS  AGE  -  crashed
Warm / idle (1)
  ID  idle  demo  WS  AGE  $0.001  idle
Done (1)
  ID  done  demo  WS  AGE  -  finished
`

func TestBoard_OnceShowsASessionInEveryColumnAsText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	boardHome(t, w)
	r := w.mustRun("board", "--once")
	if got := normalBoard(w, r.stdout); got != boardOnceGolden {
		t.Fatalf("kandev board --once:\n%s\nwant:\n%s\n(as printed:\n%s)", got, boardOnceGolden, r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Fatal("escape sequences in --once output that is not a terminal")
	}
	if r := w.run("board"); r.code != 2 || !strings.Contains(r.stderr, "kandev board --once prints it as text") {
		t.Fatalf("the board without a terminal: %s", r)
	}
	var j struct {
		Columns []struct {
			Column   string
			Sessions []struct{ ID, Badge, Problem string }
		}
	}
	decodeJSON(t, w.mustRun("--json", "board", "--once").stdout, &j)
	var cols []string
	for _, c := range j.Columns {
		cols = append(cols, c.Column+":"+strconv.Itoa(len(c.Sessions)))
	}
	if got := strings.Join(cols, " "); got != "needs_you:3 running:1 needs_resume:1 warm_idle:1 done:1" {
		t.Fatalf("--json columns: %s", got)
	}
}

// resize makes tm's terminal w x h.
func (s *tmuxSession) resize(w, h int) {
	s.tmux("resize-window", "-t", s.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
}

// The terminal modes a full-screen program sets, as tmux reports them:
// alternate screen, mouse button events, SGR mouse, cursor visible.
const (
	boardModes = "1 1 1 0"
	shellModes = "0 0 0 1"
)

func (s *tmuxSession) modes() string {
	return strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.name,
		"#{alternate_on} #{mouse_button_flag} #{mouse_sgr_flag} #{cursor_flag}"))
}

// cookedCheck, run after a command in the terminal, prints TERMINAL-COOKED
// if the terminal reads lines and echoes (the command gave it back) and
// keeps the command's exit code.
const cookedCheck = `; rc=$?; stty -a </dev/tty | grep -Eq '(^| )icanon( |$)' && stty -a </dev/tty | grep -Eq '(^| )echo( |$)' && echo TERMINAL-COOKED; (exit $rc)`

// waitScreenAll waits until the screen shows every one of want.
func (s *tmuxSession) waitScreenAll(want ...string) string {
	s.t.Helper()
	var scr string
	for _, x := range want {
		scr = s.waitScreen(x)
	}
	return scr
}

// noBoardLeft fails unless no kandev board process of the world is left.
func noBoardLeft(t *testing.T, w *world) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	for _, pid := range proc.ProcessesWithEnv("KANDEV_HOME=" + w.home) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if argv := strings.Split(string(cmd), "\x00"); filepath.Base(argv[0]) == "kandev" && slices.Contains(argv, "board") {
			t.Fatalf("process %d is left after q: %q", pid, cmd)
		}
	}
}

// agentLineShown reports whether a line of the screen shows word as the agent's
// (the prompt that asked for it shows it after "/say").
func agentLineShown(screen, word string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, word) && !strings.Contains(l, "/say") {
			return true
		}
	}
	return false
}

var boardHeads = []string{"Needs you", "Running", "Needs resume", "Warm / idle", "Done"}

func TestBoard_InATerminalLiveAtEverySizeAndQLeavesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := w.mustStart("--title", "first one", "--linger", "0", "/say hello from the first")
	// The pager notes how it found the terminal: given back by the board.
	pagerScript := "#!/bin/sh\nstty -a </dev/tty >pager.stty\nexec tee pager.out\n"
	if err := os.WriteFile(filepath.Join(w.cwd, "pager.sh"), []byte(pagerScript), 0o700); err != nil {
		t.Fatal(err)
	}
	tm := newTmux(t, w, "PAGER=./pager.sh "+kandevBin+" board"+cookedCheck)
	tm.waitScreenAll(append(boardHeads, "Warm / idle 1", "first one", "q quit")...)
	if m := tm.modes(); m != boardModes {
		t.Fatalf("the board's terminal modes are %q, want %q", m, boardModes)
	}
	if colour := regexp.MustCompile(`\x1b\[[0-9;]*\b(3[0-8]|9[0-7])\b`); colour.MatchString(tm.tmux("capture-pane", "-p", "-e", "-t", tm.name)) {
		t.Fatal("colours on the board under NO_COLOR")
	}
	// t shows the transcript in $PAGER, then the board is back.
	tm.keys("l", "l", "l", "t")
	waitFor(t, 30*time.Second, "the transcript in the pager", func() bool {
		b, _ := os.ReadFile(filepath.Join(w.cwd, "pager.out"))
		return strings.Contains(string(b), "hello from the first")
	})
	tm.waitScreen("transcript " + first + ": done")
	if b, _ := os.ReadFile(filepath.Join(w.cwd, "pager.stty")); !regexp.MustCompile(`(^|\s)icanon\s.*(^|\s)echo\s`).Match(b) {
		t.Fatalf("the pager got the terminal raw:\n%s", b)
	}
	if m := tm.modes(); m != boardModes { // the mouse back too
		t.Fatalf("after the pager the terminal modes are %q, want %q", m, boardModes)
	}
	tm.resize(80, 24)
	tm.waitScreen("? keys") // redrawn at 80 columns: the help line fits
	scr := tm.waitScreenAll(append(boardHeads, "first one")...)
	if lines := strings.Split(strings.TrimRight(scr, "\n"), "\n"); len(lines) > 24 {
		t.Fatalf("the board at 80x24 is %d lines:\n%s", len(lines), scr)
	}
	tm.resize(70, 20)
	tm.waitScreen("needs a terminal of at least 80x24 (this one is 70x20)")
	tm.resize(200, 50)
	tm.waitScreen("Needs you 0")

	// A session started from another shell appears without a key.
	w.mustStart("--title", "from another shell", "--linger", "0")
	tm.waitScreen("from another shell")

	// A line the agent writes reaches the screen (a figure: from its
	// timestamp in the log to the screen that shows it).
	id := w.mustStart("--title", "talker", "--linger", "0")
	w.busyTurnWith(id, "/sleep 800\n/say MARKER-LATE\n/sleep 30000")
	var seen time.Time
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if agentLineShown(tm.screen(), "MARKER-LATE") {
			seen = time.Now()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's line never reached the board:\n%s", tm.screen())
		}
	}
	var said time.Time
	var text string // the agent's words stream in chunks: the one that completes the marker
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventAgentMessage && !strings.Contains(text, "MARKER-LATE") {
			text += e.Content
			said = e.Time()
		}
	}
	if said.IsZero() {
		t.Fatalf("the board showed the agent's line before the log had it:\n%s", tm.screen())
	}
	lag := seen.Sub(said)
	t.Logf("figure: a log line reached the board's screen %v after it was appended", lag.Round(time.Millisecond))
	if lag > 2*time.Second { // the figure is 100 ms; the bound is generous for a loaded machine
		t.Fatalf("a log line took %v to reach the screen", lag)
	}

	tm.keys("q")
	if code := terminalExit(tm); code != "0" {
		t.Fatalf("q: exit %s", code)
	}
	if m := tm.modes(); m != shellModes || !strings.Contains(tm.screen(), "TERMINAL-COOKED") {
		t.Fatalf("q left the terminal in modes %q (want %q), or raw:\n%s", m, shellModes, tm.screen())
	}
	noBoardLeft(t, w)
}

func TestBoard_KeysActThroughTheCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	crashed := w.mustStart("--title", "crashed", "--linger", "0")
	w.crashMidTurn(crashed) // first: it kills every process of the home
	if r := w.run("--permissions", "defer", "start", "--title", "asks", "/ask Which colour?"); r.code != 7 {
		t.Fatalf("a parked question exits 7: %s", r)
	}
	asks := w.onlyNew(map[string]string{"": crashed})
	time.Sleep(10 * time.Millisecond) // the write's session is the newer one
	if r := w.run("--permissions", "defer", "start", "--title", "wants to write", "/write out.txt from the board"); r.code != 7 {
		t.Fatalf("a parked write exits 7: %s", r)
	}
	parked := w.onlyNew(map[string]string{"": crashed, "a": asks})
	busy := w.mustStart("--title", "busy", "--linger", "0")
	w.busyTurnWith(busy, "/sleep 30000")

	tm := newTmux(t, w, kandevBin+" board")
	tm.waitScreenAll("Needs you 2", "Running 1", "Needs resume 1", parked+" waiting-for-permission")

	// y approves the parked write: the file is written.
	tm.keys("y")
	tm.waitScreen("approve " + parked + ": done")
	waitFor(t, 30*time.Second, "the approved write", func() bool {
		b, _ := os.ReadFile(filepath.Join(w.cwd, "out.txt"))
		return strings.Contains(string(b), "from the board")
	})

	// a answers the parked question with the line typed.
	tm.waitScreen(asks + " waiting-for-permission")
	tm.keys("a")
	tm.waitScreen("answer:")
	tm.keys("blue", "Enter")
	tm.waitScreen("answer " + asks + ": done")
	w.waitForEvents(asks, "the agent's word on the answer", func(evs []eventlog.Event) bool {
		return strings.Contains(agentText(evs, lastTurn(evs)), "answer: blue")
	})

	// c in Running cancels the turn.
	tm.keys("l")
	tm.waitScreen(busy + " running")
	tm.keys("c")
	tm.waitScreen("cancel " + busy + ": done")
	w.waitForEvents(busy, "the cancelled turn", func(evs []eventlog.Event) bool {
		return turnEnd(evs, lastTurn(evs)) == eventlog.StopCancelled
	})

	// r in Needs resume resumes in the terminal, then the board is back.
	tm.keys("l")
	tm.waitScreen(crashed + " needs-resume")
	tm.keys("r")
	tm.waitScreen("resume " + crashed + ": done")
	if n := len(continuationTurns(w.events(crashed))); n != 1 {
		t.Fatalf("the interrupted turn was continued %d times, want once", n)
	}
	tm.waitScreen("Needs resume 0")
	tm.keys("q")
	if code := terminalExit(tm); code != "0" {
		t.Fatalf("q: exit %s", code)
	}
	noBoardLeft(t, w)
}
