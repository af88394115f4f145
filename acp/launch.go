package acp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kandev/kandev/state"
)

// ErrAgentNotInstalled says the agent's program is not on PATH.
var ErrAgentNotInstalled = errors.New("agent not installed")

// Process is a launched agent. kandev does not start the agent itself but a
// copy of itself as the agent's supervisor (supervise.go), which leads the
// agent's process group, starts the agent in it with stdio connected to
// kandev by pipes, and kills the agent and everything it started as soon as
// this process closes the watch pipe or dies, however it dies.
type Process struct {
	cmd    *exec.Cmd
	watch  *os.File // write end of the supervisor's watch pipe
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	stderr *tailBuffer
	done   chan struct{}
	err    error // set before done closes
	began  time.Time
	ended  time.Time
	// PID is the supervisor's: the leader of the agent's process group.
	PID   int
	Start string
	// Args is the agent's command line as launched.
	Args []string
}

// LaunchSpec is what Launch needs.
type LaunchSpec struct {
	Command []string
	Env     map[string]string
	Dir     string
	Home    string // passed on as KANDEV_HOME (the demo agent keeps its files there)
	Hint    string // how to install the program, for the not-installed error
	// SessionID tags the agent's environment so leftovers can be found later.
	SessionID string
}

// Launch starts the agent under its supervisor.
func Launch(spec LaunchSpec) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("%w: the profile has an empty command", ErrAgentNotInstalled)
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s was not found on PATH; install it: %s", ErrAgentNotInstalled, spec.Command[0], spec.Hint)
	}
	args := append([]string{path}, spec.Command[1:]...)
	watchR, watchW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start agent %s: %w", strings.Join(spec.Command, " "), err)
	}
	defer watchR.Close() // the supervisor holds its own copy
	cmd := exec.Command(selfExe(), args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+spec.Home, state.SessionTagEnv+"="+spec.SessionID, superviseEnv+"=1")
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.ExtraFiles = []*os.File{watchR} // fd 3 in the supervisor
	// Own process group, so a terminal's Ctrl-C reaches kandev only and
	// kandev decides how the agent stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		watchW.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		watchW.Close()
		return nil, err
	}
	p := &Process{cmd: cmd, watch: watchW, Stdin: stdin, Stdout: stdout, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{}), Args: args}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		watchW.Close()
		return nil, fmt.Errorf("start agent %s: %w", strings.Join(spec.Command, " "), err)
	}
	p.PID = cmd.Process.Pid
	p.Start = state.ProcessStart(p.PID)
	p.began = time.Now()
	go func() {
		p.err = cmd.Wait()
		p.ended = time.Now()
		p.watch.Close()
		close(p.done)
	}()
	return p, nil
}

// ExitedWithin reports whether the process exited less than d after it started.
func (p *Process) ExitedWithin(d time.Duration) bool {
	select {
	case <-p.done:
	case <-time.After(time.Until(p.began.Add(d))):
		return false
	}
	return p.ended.Sub(p.began) < d
}

// Done is closed when the agent process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitDescription says how the agent ended ("" while it runs); the
// supervisor exits the way the agent did.
func (p *Process) ExitDescription() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if p.err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return p.err.Error()
}

// Stderr is the last 16 KiB the agent wrote to stderr.
func (p *Process) Stderr() string { return p.stderr.String() }

// Stop ends the agent: close its stdin, then after grace SIGTERM to its
// group, then Kill. Some agents (codex-acp) do not exit on EOF. When the
// agent exits, its supervisor ends whatever the agent left running.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Stdin.Close()
	if p.exitsWithin(grace) {
		return
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM) // the supervisor ignores it; the agent's group gets it
	if p.exitsWithin(2 * time.Second) {
		return
	}
	p.Kill()
}

// Kill ends the agent and everything it started at once: closing the watch
// pipe tells the supervisor to kill them all; should it not manage within
// half a second (stopped, or stuck), kandev kills the process group and the
// tree itself.
func (p *Process) Kill() {
	_ = p.watch.Close()
	if p.exitsWithin(500 * time.Millisecond) {
		return
	}
	kids := state.Descendants(p.PID)
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	<-p.done
	killGroups(kids)
}

func (p *Process) exitsWithin(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// KillStale stops an agent process left behind by a dead owner, after
// checking that pid is still the process that was recorded.
func KillStale(pid int, start string) bool {
	if !state.ProcessAlive(pid, start) || start == "" {
		return false
	}
	kids := state.Descendants(pid)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	killGroups(kids)
	for i := 0; i < 100 && state.ProcessAlive(pid, start); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// KillSessionLeftovers ends processes that an agent of session id started
// and that outlived it: every agent is launched with the session tag in its
// environment, which its children inherit. The supervisor normally leaves
// none; this covers one that was itself killed with SIGKILL.
func KillSessionLeftovers(home, id string) int {
	procs := state.TaggedProcesses(home)[id]
	for _, pr := range procs {
		_ = syscall.Kill(pr.PID, syscall.SIGKILL)
	}
	return len(procs)
}

// killGroups SIGKILLs each pid's process group (unless it is ours) and the pid itself.
func killGroups(pids []int) {
	own := syscall.Getpgrp()
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != own {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
