package commands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/verdict"
)

// demoCmd is kandev demo: the whole story on the built-in demo agent.
type demoCmd struct {
	Keep bool `help:"Keep the temporary home afterwards (its path is printed)."`
}

// Help shows an example.
func (c *demoCmd) Help() string { return "Example:\n  kandev demo" }

// demoRun is one run of the story: a temporary home and working directory
// in which this same executable is run as a user would run it.
type demoRun struct {
	env  *Env
	exe  string
	home string
	cwd  string
	step int
	// bound is how long one step's kandev may run (demoStepBound).
	bound time.Duration
}

const demoSteps = 6

// demoStepBound is how long one step's kandev may run before the demo stops
// it: longer than kandev's own bounds on the way (the agent's handshake, 60 s
// by default, then a turn of a few seconds), so that on a slow machine kandev
// itself says what is slow, or the step passes late, rather than the demo
// killing it midway.
const demoStepBound = 3 * time.Minute

// Run tells the story step by step; it fails as soon as a step does not do what it says.
func (c *demoCmd) Run(env *Env) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "kandev-demo-")
	if err != nil {
		return err
	}
	keep := c.Keep
	defer func() {
		if keep {
			fmt.Fprintf(env.Out.Out, "\nThe demo's home is kept: KANDEV_HOME=%s\n", filepath.Join(root, "home"))
		} else {
			os.RemoveAll(root)
		}
	}()
	d := &demoRun{env: env, exe: exe, home: filepath.Join(root, "home"), cwd: filepath.Join(root, "project"), bound: demoStepBound}
	if err := os.MkdirAll(d.cwd, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.cwd, "notes.txt"), []byte("Buy milk.\nShip kandev.\n"), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(d.home, 0o700); err != nil {
		return err
	}
	// The demo agent slowed down a little, so the owner can be killed mid-turn, during a tool call.
	// Nothing lingers: the story kills the command that owns the session, and
	// no agent may outlive the demo's scratch home.
	cfg := fmt.Sprintf("[permissions]\nmode = \"approve-all\"\n[session]\nlinger_seconds = 0\n[agents.demo]\ncommand = [%q, \"demo-agent\", \"--delay\", \"400\"]\n", exe)
	if err := os.WriteFile(filepath.Join(d.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(env.Out.Out, "kandev demo: a session survives its owner being killed. Scratch home: %s\n", d.home)
	err = d.story()
	// A failed step leaves its session to look at (kandev events, status).
	keep = keep || d.step > 0 && err != nil
	return err
}

func (d *demoRun) story() error {
	id, err := d.stepStart()
	if err != nil {
		return err
	}
	for _, step := range []func(string) error{d.stepStatus, d.stepResume, d.stepResumeAgain, d.stepRecall, d.stepRecap} {
		if err := step(id); err != nil {
			return err
		}
	}
	fmt.Fprintf(d.env.Out.Out, "\nEvery step did what it said. Try it yourself: kandev start \"remember PINEAPPLE\", then kandev prompt --latest recall.\n")
	return nil
}

func (d *demoRun) stepStart() (string, error) {
	prompt := "remember PINEAPPLE\n/read notes.txt\n/say Noted. Now summarising the notes..."
	d.header("Start a session: the agent remembers PINEAPPLE and reads notes.txt (a tool call).",
		`kandev start "remember PINEAPPLE" ...`, "")
	id, printed, err := d.startAndKill(prompt)
	if err != nil {
		return "", err
	}
	d.say("the owning kandev process was killed (SIGKILL) during the tool call, after %d events were on disk", len(printed))
	return id, nil
}

func (d *demoRun) stepStatus(id string) error {
	d.header("Status: the session needs resuming; the badge says why.", "kandev status "+id, "")
	var st struct {
		Status Status `json:"status"`
	}
	out, err := d.kandev(true, "--json", "status", id)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return err
	}
	d.say("badge %q, needs_resume %v, reason %q, interrupted turn: %v", st.Status.Badge, st.Status.NeedsResume, st.Status.Reason, st.Status.Interrupted)
	if st.Status.Badge != verdict.BadgeNeedsResume || !st.Status.Interrupted {
		return d.fail("status did not report an interrupted turn")
	}
	return nil
}

func (d *demoRun) stepResume(id string) error {
	d.header("Resume: relaunch the agent, restore its conversation, repair the turn, continue it once.", "kandev resume "+id, "")
	if _, err := d.kandev(false, "resume", id); err != nil {
		return err
	}
	evs, _, err := eventlog.ReadAll(d.logPath(id))
	if err != nil {
		return err
	}
	var restore string
	unknown, conts := 0, 0
	for _, e := range evs {
		switch {
		case e.Type == eventlog.EventAgentStarted:
			restore = e.Restore
		case e.Type == eventlog.EventToolResult && e.ToolStatus == "unknown":
			unknown++
		case e.Type == eventlog.EventTurnStarted && e.Source == eventlog.SourceContinuation:
			conts++
		}
	}
	d.say("restore method %q; %d tool call(s) repaired with unknown outcome; %d continuation turn sent", restore, unknown, conts)
	if restore != "resume" || unknown != 1 || conts != 1 {
		return d.fail("resume did not restore natively, repair the tool call and continue exactly once")
	}
	return nil
}

func (d *demoRun) stepResumeAgain(id string) error {
	d.header("A second resume changes nothing: a turn is continued at most once.", "kandev resume "+id, "")
	before, _, err := eventlog.ReadAll(d.logPath(id))
	if err != nil {
		return err
	}
	if _, err := d.kandev(true, "resume", id); err != nil {
		return err
	}
	after, _, err := eventlog.ReadAll(d.logPath(id))
	if err != nil {
		return err
	}
	added := 0
	for _, e := range after[len(before):] {
		if e.Type == eventlog.EventTurnStarted {
			added++
		}
	}
	d.say("%d new turns", added)
	if added != 0 {
		return d.fail("the second resume started a turn")
	}
	return nil
}

func (d *demoRun) stepRecall(id string) error {
	d.header("Ask in a new process: the restored agent still knows the word.", "kandev prompt "+id+" recall", "")
	out, err := d.kandev(false, "prompt", id, "recall")
	if err != nil {
		return err
	}
	if !bytes.Contains(out, []byte("PINEAPPLE")) {
		return d.fail("recall did not answer PINEAPPLE")
	}
	return nil
}

func (d *demoRun) stepRecap(id string) error {
	d.header("Recap: the bounded snapshot a person or an agent reads to reorient.", "kandev recap "+id, "")
	_, err := d.kandev(false, "recap", id, "--limit", "6")
	return err
}

func (d *demoRun) logPath(id string) string {
	return filepath.Join(d.home, "sessions", id+".jsonl")
}

func (d *demoRun) header(what, cmd, _ string) {
	d.step++
	fmt.Fprintf(d.env.Out.Out, "\n[%d/%d] %s\n      $ %s\n", d.step, demoSteps, what, cmd)
}

func (d *demoRun) say(format string, args ...any) {
	fmt.Fprintf(d.env.Out.Out, "      -> "+format+"\n", args...)
}

func (d *demoRun) fail(why string) error {
	return fmt.Errorf("demo step %d failed: %s", d.step, why)
}

// kandev runs this executable in the demo's home; output is shown indented unless quiet.
func (d *demoRun) kandev(quiet bool, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(d.env.Ctx, d.bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.exe, args...)
	cmd.Dir = d.cwd
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+d.home, "NO_COLOR=1", "KANDEV_HOLDER=demo")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if !quiet {
		d.indent(out.String())
	}
	if ctx.Err() == context.DeadlineExceeded {
		// Killed here: its exit status ("signal: killed", or 1 on Windows) says nothing.
		return out.Bytes(), fmt.Errorf("demo step %d: kandev %s did not finish within %s and was stopped (a busy machine, or a hung agent): %s",
			d.step, strings.Join(args, " "), d.bound, strings.TrimSpace(errb.String()))
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("demo step %d: kandev %s failed: %v: %s", d.step, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

func (d *demoRun) indent(s string) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return
	}
	for _, l := range strings.Split(s, "\n") {
		fmt.Fprintln(d.env.Out.Out, "      | "+l)
	}
}

// startAndKill starts the session and SIGKILLs the owning process as soon as
// it has printed the tool call (so the call has no result yet).
func (d *demoRun) startAndKill(prompt string) (string, []eventlog.Event, error) {
	cmd := exec.Command(d.exe, "--json", "start", prompt)
	cmd.Dir = d.cwd
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+d.home, "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(d.bound, func() {
		timedOut.Store(true)
		_ = cmd.Process.Kill()
	})
	defer timer.Stop()
	var printed []eventlog.Event
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	killed := false
	for sc.Scan() {
		var e eventlog.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Seq == 0 {
			continue
		}
		printed = append(printed, e)
		switch e.Type {
		case eventlog.EventAgentMessage:
			d.say("agent: %s", strings.TrimSpace(e.Content))
		case eventlog.EventToolCall:
			d.say("tool call: %s (%s)", e.ToolName, e.ToolStatus)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
		if killed {
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	_ = cmd.Wait()
	if timedOut.Load() {
		return "", printed, d.fail(fmt.Sprintf("kandev start did not reach the tool call within %s and was stopped (a busy machine, or a hung agent)", d.bound))
	}
	if !killed || len(printed) == 0 {
		return "", printed, d.fail("the turn ended before the owner could be killed")
	}
	return printed[0].SessionID, printed, nil
}
