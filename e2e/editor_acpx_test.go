package e2e_test

// kandev acp driven by acpx (npm acpx 0.19.1), a headless ACP client we did
// not write: each acpx command is a new process, a queue owner keeps the
// agent (here kandev acp) running between them for --ttl seconds.

import (
	"bytes"
	"context"
	"fmt"
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

const acpxVersion = "0.19.1"

// installAcpx returns the command that runs acpx, installed once into the
// user cache (as the other npm suites are), or skips visibly.
func installAcpx(t *testing.T) []string {
	t.Helper()
	requireNPMOptIn(t, "acpx "+acpxVersion)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed; acpx cannot run here")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("SKIP: npm is not installed; cannot install acpx")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "kandev-test", "acpx-"+acpxVersion)
	cli := filepath.Join(dir, "node_modules", "acpx", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		os.MkdirAll(dir, 0o755)
		out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "acpx@"+acpxVersion).CombinedOutput()
		if err != nil {
			t.Fatalf("npm install acpx@%s: %v\n%s", acpxVersion, err, out)
		}
	}
	// acpx asks for Node 22.13; say so if this node cannot run it.
	if out, err := exec.Command(node, cli, "--version").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != acpxVersion {
		t.Skipf("SKIP: acpx %s does not run under this node (%v): %s", acpxVersion, err, out)
	}
	return []string{node, cli}
}

// acpxWorld runs acpx with kandev acp as its custom agent, acpx's own
// state in a home of its own.
type acpxWorld struct {
	*world
	acpx []string
	env  []string
	home string // acpx's HOME (~/.acpx)
	// agent is the command acpx runs: kandev acp, its stderr appended to
	// agentLog (acpx does not show it), for a failure to show.
	agent, agentLog string
}

func newAcpxWorld(t *testing.T) *acpxWorld {
	acpx := installAcpx(t)
	w := newWorld(t)
	home := t.TempDir()
	a := &acpxWorld{world: w, acpx: acpx, env: append(append([]string{}, w.env...), "HOME="+home), home: home}
	a.agentLog = filepath.Join(home, "kandev-acp.log")
	a.agent = filepath.Join(home, "kandev-acp")
	// exec: acpx's signals reach kandev acp itself, as without the script.
	script := fmt.Sprintf("#!/bin/sh\necho \"kandev acp pid $$ starts\" >>%q\nexec %q acp \"$@\" 2>>%q\n", a.agentLog, kandevBin, a.agentLog)
	if err := os.WriteFile(a.agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return a
}

// agentStderr is what every kandev acp acpx ran wrote to stderr.
func (a *acpxWorld) agentStderr() string {
	b, _ := os.ReadFile(a.agentLog)
	return string(b)
}

func (a *acpxWorld) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	full := append(append([]string{}, a.acpx[1:]...), append([]string{"--agent", a.agent, "--ttl", "1"}, args...)...)
	cmd := exec.CommandContext(ctx, a.acpx[0], full...)
	cmd.Dir, cmd.Env = a.cwd, a.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// run runs one acpx command to its end once acpx's queue owner from the
// command before has gone (--ttl 1), so the command starts its own queue
// owner and kandev acp: an acpx command that meets a queue owner as it
// closes fails with acpx's retryable "Queue owner is shutting down" (under
// load in most runs; commands with other flags replace the queue owner
// too). code is its exit code.
func (a *acpxWorld) run(args ...string) (string, int) {
	a.t.Helper()
	a.waitQueueOwnerGone()
	return a.runOnce(args...)
}

// runOnce runs one acpx command to its end, whatever queue owner runs: as
// `acpx cancel` beside the one that runs a turn.
func (a *acpxWorld) runOnce(args ...string) (string, int) {
	a.t.Helper()
	out, code, err := a.runBounded(args...)
	if err != nil {
		a.t.Fatalf("acpx %q: %v\n%s", args, err, out)
	}
	return out, code
}

// runBounded runs one acpx command for at most 90 s; err says why it did
// not run to its end. It never stops the test, so a goroutine may call it.
func (a *acpxWorld) runBounded(args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd, out := a.command(ctx, args...)
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), -1, fmt.Errorf("did not finish in 90 s")
	}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return out.String(), -1, err
	}
	return out.String(), cmd.ProcessState.ExitCode(), nil
}

func (a *acpxWorld) mustRun(args ...string) string {
	a.t.Helper()
	out, code := a.run(args...)
	if code != 0 {
		a.t.Fatalf("acpx %q exit %d:\n%s", args, code, out)
	}
	return out
}

// acpxJob is an acpx command running beside the test.
type acpxJob struct {
	done chan struct{}
	out  string
	code int
	err  error
}

// start runs an acpx command in the background once acpx's queue owner
// from the command before has gone, as run does.
func (a *acpxWorld) start(args ...string) *acpxJob {
	a.t.Helper()
	a.waitQueueOwnerGone()
	b := &acpxJob{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.out, b.code, b.err = a.runBounded(args...)
	}()
	return b
}

// wait returns the background command's output and exit code.
func (b *acpxJob) wait(t *testing.T) (string, int) {
	t.Helper()
	<-b.done
	if b.err != nil {
		t.Fatalf("acpx in the background: %v\n%s", b.err, b.out)
	}
	return b.out, b.code
}

// waitForItsTurn waits until the session runs a turn, failing with the
// background command's output if it ended first.
func (a *acpxWorld) waitForItsTurn(t *testing.T, b *acpxJob, id string) {
	t.Helper()
	waitFor(t, 30*time.Second, "session "+id+" to run the background command's turn", func() bool {
		select {
		case <-b.done:
			t.Fatalf("acpx in the background ended (exit %d, %v) before session %s ran its turn:\n%s\nkandev acp's stderr:\n%s", b.code, b.err, id, b.out, a.agentStderr())
		default:
		}
		s, err := dailyRecord(a.world.home, id)
		return err == nil && s.State == state.StateRunning && s.CurrentTurn != "" && turnStartedInLog(a.world.home, id, s.CurrentTurn)
	})
}

// queueOwnerGone says whether acpx's queue owner has closed after --ttl 1
// (its files under ~/.acpx/queues are gone).
func (a *acpxWorld) queueOwnerGone() bool {
	queues, _ := os.ReadDir(filepath.Join(a.home, ".acpx", "queues"))
	return len(queues) == 0
}

// waitQueueOwnerGone waits until acpx's queue owner has closed.
func (a *acpxWorld) waitQueueOwnerGone() {
	a.t.Helper()
	waitFor(a.t, 30*time.Second, "acpx's queue owner to close after --ttl 1", a.queueOwnerGone)
}

// waitOwnerGone waits until no kandev acp owns the session and acpx's
// queue owner, which closed it after --ttl, is gone too, so the next acpx
// command starts both anew.
func (a *acpxWorld) waitOwnerGone(id string) {
	a.t.Helper()
	waitFor(a.t, 30*time.Second, "kandev acp and acpx's queue owner of session "+id+" to close after --ttl 1", func() bool {
		return a.queueOwnerGone() && a.session(id).OwnerPID == 0
	})
}

func TestEditor_AcpxDrivesKandevACPThroughAWholeSession(t *testing.T) {
	t.Parallel()
	a := newAcpxWorld(t)
	out := a.mustRun("sessions", "new")
	lines := strings.Fields(strings.TrimSpace(out))
	id := lines[len(lines)-1]
	if s := a.session(id); s.ID != id || s.Cwd != a.cwd {
		t.Fatalf("acpx sessions new printed %q; kandev has %+v", out, s)
	}

	if out := a.mustRun("remember KIWI"); !strings.Contains(out, "OK, I will remember KIWI.") || !strings.Contains(out, "[done] end_turn") {
		t.Fatalf("prompt:\n%s", out)
	}
	a.waitOwnerGone(id)
	if out := a.mustRun("recall"); !strings.Contains(out, "KIWI") {
		t.Fatalf("recall in a new acpx process and a new kandev acp:\n%s", out)
	}
	if n := len(ofType(a.events(id), eventlog.EventAgentStarted)); n < 2 {
		t.Fatalf("%d agent starts: the recall did not run in a new kandev acp", n)
	}

	t.Run("a tool call", func(t *testing.T) {
		os.WriteFile(filepath.Join(a.cwd, "notes.txt"), []byte("the notes"), 0o600)
		if out := a.mustRun("/read notes.txt"); !strings.Contains(out, "the notes") {
			t.Fatalf("read:\n%s", out)
		}
		evs := a.events(id)
		res := ofType(evs, eventlog.EventToolResult)
		if len(res) == 0 || res[len(res)-1].ToolStatus != "completed" {
			t.Fatalf("tool results %s", mustJSON(res))
		}
	})
	t.Run("approve and deny", func(t *testing.T) {
		a.mustRun("--approve-all", "/write approved.txt yes")
		if b, err := os.ReadFile(filepath.Join(a.cwd, "approved.txt")); err != nil || string(b) != "yes" {
			t.Fatalf("approved write: %q %v", b, err)
		}
		// acpx exits 5 (its PERMISSION_DENIED) when it ran the prompt
		// itself and denied every request, and 0 when its queue owner ran
		// it: either is a denial.
		if out, code := a.run("--deny-all", "/write denied.txt no"); (code != 0 && code != 5) || !strings.Contains(out, "denied") {
			t.Fatalf("denied write: exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(a.cwd, "denied.txt")); err == nil {
			t.Fatal("the denied write happened")
		}
		resolved := ofType(a.events(id), eventlog.EventPermissionResolved)
		if len(resolved) != 2 {
			t.Fatalf("permission answers logged: %s", mustJSON(resolved))
		}
	})
	t.Run("cancel from a second acpx process", func(t *testing.T) {
		bg := a.start("/sleep 30000")
		a.waitForItsTurn(t, bg, id)
		if out, code := a.runOnce("cancel"); code != 0 || !strings.Contains(out, "cancel") {
			t.Fatalf("acpx cancel: exit %d\n%s", code, out)
		}
		out, code := bg.wait(t)
		if code != 0 || !strings.Contains(out, "[done] cancelled") {
			t.Fatalf("the cancelled prompt: exit %d\n%s", code, out)
		}
		ended := ofType(a.events(id), eventlog.EventTurnEnded)
		if last := ended[len(ended)-1]; last.StopReason != "cancelled" {
			t.Fatalf("last turn ended %s", mustJSON(last))
		}
	})
	t.Run("kandev acp SIGKILLed before the agent spoke, then a prompt gets its own answer", func(t *testing.T) {
		a.waitOwnerGone(id)
		bg := a.start("/sleep 3000\nremember GUAVA")
		a.waitForItsTurn(t, bg, id)
		time.Sleep(300 * time.Millisecond)
		pid := a.session(id).OwnerPID
		if pid == 0 {
			t.Fatal("no kandev acp owns the running turn")
		}
		_ = kill(pid, syscall.SIGKILL)
		if out, code := bg.wait(t); code == 0 {
			t.Fatalf("acpx reported success for a turn whose agent was killed:\n%s", out)
		}
		out := a.mustRun("/say MINE")
		if !strings.Contains(out, "MINE") || strings.Index(out, "MINE") > strings.LastIndex(out, "[done] end_turn") {
			t.Fatalf("the prompt after the kill was not answered by its own turn:\n%s", out)
		}
		evs := a.events(id)
		mine := ""
		for _, e := range evs {
			if e.Type == eventlog.EventUserMessage && e.Content == "/say MINE" {
				mine = e.TurnID
			}
		}
		if mine == "" || !strings.Contains(agentText(evs, mine), "MINE") {
			t.Fatalf("no turn carries /say MINE and its answer")
		}
	})
}
