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

// Process is a launched agent: its own process group, killed by the kernel
// if kandev dies (Pdeathsig), stdio connected to kandev by pipes.
type Process struct {
	cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	stderr *tailBuffer
	done   chan struct{}
	err    error // set before done closes
	began  time.Time
	ended  time.Time
	PID    int
	Start  string
}

// LaunchSpec is what Launch needs.
type LaunchSpec struct {
	Command []string
	Env     map[string]string
	Dir     string
	Home    string // passed on as KANDEV_HOME (the demo agent keeps its files there)
	Hint    string // how to install the program, for the not-installed error
}

// Launch starts the agent.
func Launch(spec LaunchSpec) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("%w: the profile has an empty command", ErrAgentNotInstalled)
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s was not found on PATH; install it: %s", ErrAgentNotInstalled, spec.Command[0], spec.Hint)
	}
	cmd := exec.Command(path, spec.Command[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+spec.Home)
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Own process group, so a terminal's Ctrl-C reaches kandev only and kandev
	// decides how the agent stops; Pdeathsig so it never outlives kandev.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, Stdin: stdin, Stdout: stdout, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent %s: %w", strings.Join(spec.Command, " "), err)
	}
	p.PID = cmd.Process.Pid
	p.Start = state.ProcessStart(p.PID)
	p.began = time.Now()
	go func() {
		p.err = cmd.Wait()
		p.ended = time.Now()
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

// ExitDescription says how the process ended ("" while it runs).
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

// Stop ends the agent: close its stdin, then SIGTERM to its group after
// grace, then SIGKILL. Some agents (codex-acp) do not exit on EOF.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Stdin.Close()
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	<-p.done
}

// Kill ends the agent's whole process group at once.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	<-p.done
}

// KillStale stops an agent process left behind by a dead owner, after
// checking that pid is still the process that was recorded.
func KillStale(pid int, start string) bool {
	if !state.ProcessAlive(pid, start) || start == "" {
		return false
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 100 && state.ProcessAlive(pid, start); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
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
