package e2e_test

import (
	"github.com/kandev/kandev/internal/wiretrace"

	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
)

// kandevBin is the binary built once for every end-to-end test.
var kandevBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kandev-e2e-bin")
	if err != nil {
		panic(err)
	}
	kandevBin = filepath.Join(dir, "kandev")
	// Every kandev the tests run runs on the default settings, as a person
	// gets them: owners linger in a detached process after their turn. A CI
	// runner's own CI=true must not turn that off; a test whose subject needs
	// the owner in the command itself says so (--linger 0, or world.underCI).
	os.Unsetenv("CI")
	out, err := exec.Command("go", "build", "-o", kandevBin, "..").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building kandev: %v\n%s", err, out)
		os.Exit(1)
	}
	flag.Parse()
	setParallel()
	// kandev acp and every demo agent trace what they send, to be checked
	// against the published protocol when the tests end.
	if traceDir, err = os.MkdirTemp("", "kandev-e2e-wire"); err == nil {
		os.Setenv(wiretrace.Env, traceDir)
	}
	code := checkWireTraces(m.Run())
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2eParallel is how many tests run at once when go test is not given
// -parallel: an end-to-end test mostly waits on its processes (an agent's
// turn, a linger, a kill), so more of them than CPUs keep the CPUs busy.
// KANDEV_E2E_PARALLEL sets it, as -parallel does.
const e2eParallel = 12

// setParallel raises -parallel to e2eParallel (or KANDEV_E2E_PARALLEL)
// unless the command line gave it.
func setParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	n := e2eParallel
	if v, err := strconv.Atoi(os.Getenv("KANDEV_E2E_PARALLEL")); err == nil && v > 0 {
		n = v
	}
	flag.Set("test.parallel", strconv.Itoa(n))
}

// requireNPMOptIn skips, visibly, a test that installs an agent from the npm
// registry unless KANDEV_E2E_NPM=1 (which .ci/run sets): a plain go test
// on a laptop never downloads hundreds of megabytes.
func requireNPMOptIn(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("KANDEV_E2E_NPM") != "1" {
		t.Skip("SKIP: " + what + " is installed from npm; set KANDEV_E2E_NPM=1 to run it (.ci/run does)")
	}
}

// world is one user's machine: a kandev home and a working directory.
type world struct {
	t    *testing.T
	home string
	cwd  string
	env  []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, home: t.TempDir(), cwd: t.TempDir()}
	w.env = append(os.Environ(), "KANDEV_HOME="+w.home, "NO_COLOR=1")
	home := w.home
	// Registered after the home's TempDir, so it runs before its removal.
	t.Cleanup(func() { endOwners(home, w.home) })
	return w
}

// underCI runs the world's kandev as a CI job does: no owner lingers after
// its turn, so each command owns its own turn. Only for a test whose subject
// is that (a kill of "the kandev" meant to kill the owner, a restore in each
// new command, CI's behaviour), with a comment saying why.
func (w *world) underCI() {
	w.env = append(w.env, "CI=1")
}

// endOwners ends what a test left running in its homes: every warm owner
// is closed (its agent stopped), then any kandev process of those homes
// still alive (an owner that would not close, a follower) is killed, so no
// process outlives its test and the home can be removed.
func endOwners(homes ...string) {
	for _, home := range homes {
		if _, err := os.Stat(filepath.Join(home, "sessions")); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cmd := exec.CommandContext(ctx, kandevBin, "close", "--all", "--now")
			cmd.Env = append(os.Environ(), "KANDEV_HOME="+home)
			cmd.Run()
			cancel()
		}
		// Whether or not the home is still there (a tmpfs home may be
		// unmounted already), and once more a moment later for an owner
		// that was being started.
		killHomeProcesses(home)
		time.Sleep(100 * time.Millisecond)
		killHomeProcesses(home)
		for _, ps := range proc.TaggedProcesses(home) {
			for _, p := range ps {
				kill(p.PID, syscall.SIGKILL)
			}
		}
	}
}

// config writes $KANDEV_HOME/config.toml.
func (w *world) config(toml string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.home, "config.toml"), []byte(toml), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run executes kandev in the world's cwd and waits for it (60 s at most).
func (w *world) run(args ...string) result {
	w.t.Helper()
	return w.runInput("", args...)
}

// commandTimeout bounds one kandev command of a test: a real agent's start
// and turn take minutes on two loaded cores (an OpenCode launch alone is
// 4.4 s of CPU; the suite starts dozens at once), and a test that hangs is
// still caught.
const commandTimeout = 4 * time.Minute

func (w *world) runInput(stdin string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, args...)
	cmd.Dir = w.cwd
	cmd.Env = w.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			w.t.Fatalf("running kandev %v: %v", args, err)
		}
	}
	if ctx.Err() != nil {
		w.t.Fatalf("kandev %v did not finish in time\n%s\n%s", args, out.String(), errb.String())
	}
	return result{out.String(), errb.String(), code}
}

// mustRun runs kandev and fails the test unless it exits 0.
func (w *world) mustRun(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("kandev %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// start runs kandev start and returns the new session's id (first line).
func (w *world) start(args ...string) (string, result) {
	w.t.Helper()
	r := w.run(append([]string{"start"}, args...)...)
	first := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if strings.HasPrefix(first, "{") {
		var e struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal([]byte(first), &e)
		return e.SessionID, r
	}
	if m := failedStart.FindStringSubmatch(r.stderr); first == "" && m != nil {
		return m[1], r // an agent that never started: no id on stdout, the error names the session
	}
	return first, r
}

// failedStart finds the session a start whose agent never started names in its error.
var failedStart = regexp.MustCompile(`session (\S+) is FAILED`)

// events reads the session's log as the test's ground truth.
func (w *world) events(id string) []eventlog.Event {
	w.t.Helper()
	evs, rep, err := eventlog.ReadAll(filepath.Join(w.home, "sessions", id+".jsonl"))
	if err != nil {
		w.t.Fatalf("reading log of %s: %v", id, err)
	}
	if p := rep.Problems(); p != "" {
		w.t.Fatalf("log of %s: %s", id, p)
	}
	return evs
}

// session reads the session record.
func (w *world) session(id string) *state.Session {
	w.t.Helper()
	h, _ := state.OpenHome(w.home)
	s, err := h.LoadSession(id)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// assertNoSeqGap checks seq is 1, 2, 3, ...
func assertNoSeqGap(t *testing.T, evs []eventlog.Event) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("seq gap: event %d has seq %d", i, e.Seq)
		}
	}
}

// ofType filters events.
// continuationTurns are the turns resume started to continue a cut-off one.
func continuationTurns(evs []eventlog.Event) []eventlog.Event {
	return ofSource(evs, eventlog.EventTurnStarted, eventlog.SourceContinuation)
}

// ofSource are the events of type typ whose source is source.
func ofSource(evs []eventlog.Event, typ, source string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range ofType(evs, typ) {
		if e.Source == source {
			out = append(out, e)
		}
	}
	return out
}

func ofType(evs []eventlog.Event, types ...string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
			}
		}
	}
	return out
}

// agentText concatenates the agent_message content of a turn ("" = all turns).
func agentText(evs []eventlog.Event, turn string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == eventlog.EventAgentMessage && (turn == "" || e.TurnID == turn) {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

// lastTurn is the turn id of the newest turn_started.
func lastTurn(evs []eventlog.Event) string {
	t := ""
	for _, e := range evs {
		if e.Type == eventlog.EventTurnStarted {
			t = e.TurnID
		}
	}
	return t
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// everyDirective is a demo-agent prompt that uses every directive but /crash
// (notes.txt must exist in the cwd; /write needs approve-all to succeed).
func everyDirective(bulk int) string {
	return strings.Join([]string{
		"remember PINEAPPLE",
		"/say hello streaming world",
		"/think pondering quietly",
		"/read notes.txt",
		"/write out.txt written by the agent",
		"/sleep 50",
		fmt.Sprintf("/bulk %d", bulk),
		"plain words",
	}, "\n")
}

// killHomeProcesses SIGKILLs every process of the home (each carries its
// KANDEV_HOME: commands, owners, supervisors, agents), again until none is
// left, since one may have been starting another.
func killHomeProcesses(home string) {
	for i := 0; i < 100; i++ {
		pids := proc.ProcessesWithEnv("KANDEV_HOME=" + home)
		if len(pids) == 0 {
			return
		}
		// Frozen first, then killed: no process of the home sees another
		// die (an owner that saw its agent die first would record an agent
		// failure instead of leaving the turn interrupted).
		for _, pid := range pids {
			freeze(pid)
		}
		for _, pid := range pids {
			kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastOf is the last of xs; with none the test fails (a panic would end
// every test of the run, not this one).
func lastOf[T any](t *testing.T, xs []T, what string) T {
	t.Helper()
	if len(xs) == 0 {
		t.Fatalf("no %s", what)
	}
	return xs[len(xs)-1]
}
