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

	"github.com/kandev/kandev/internal/proc"
)

// ErrAgentNotInstalled says the agent's program is not on PATH.
var ErrAgentNotInstalled = errors.New("agent not installed")

// Process is a launched agent, with stdio connected to kandev by pipes,
// whose whole process tree ends as soon as this process closes its watch or
// dies, however it dies. On unix kandev does not start the agent itself but
// a copy of itself as the agent's supervisor (internal/supervise), which
// leads the agent's process group and kills everything in it when the
// watch pipe closes; on Windows the agent runs in a Job Object that kills
// every process in it when its last handle closes (launch_windows.go).
type Process struct {
	cmd *exec.Cmd
	// watch ends the agent's tree when closed: the write end of the
	// supervisor's watch pipe (unix), the Job Object's handle (Windows).
	watch  io.Closer
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	stderr *tailBuffer
	done   chan struct{}
	err    error // set before done closes
	began  time.Time
	ended  time.Time
	// PID is the leader of the agent's process group: the supervisor's on
	// unix, the agent's on Windows.
	PID   int
	Start string
	// Args is the agent's command line as launched.
	Args []string
}

// stdoutPipe is the agent's stdout, read to its end. It is not exec.Cmd's
// StdoutPipe: Wait closes that the moment the process exits, dropping what
// the agent wrote last and kandev had not read yet (the last words of an
// agent that crashes mid-turn). This one ends when every writer is gone:
// the agent's tree ends with its supervisor (unix) or its job (Windows).
// After the process has exited, drainBy bounds the wait for a writer that
// escaped (a grandchild orphaned by a SIGKILLed supervisor).
type stdoutPipe struct {
	r, w *os.File
}

// newStdoutPipe makes the pipe and gives its write end to cmd; after Start,
// started closes kandev's copy of that end.
func newStdoutPipe(cmd *exec.Cmd) (*stdoutPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	return &stdoutPipe{r: r, w: w}, nil
}

func (p *stdoutPipe) started() { _ = p.w.Close() }

// failed closes both ends of a pipe whose process never started.
func (p *stdoutPipe) failed() {
	_ = p.w.Close()
	_ = p.r.Close()
}

// Read reads the agent's output; at the end (EOF, or drainBy's deadline)
// the pipe is closed.
func (p *stdoutPipe) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil {
		_ = p.r.Close()
	}
	return n, err
}

func (p *stdoutPipe) Close() error { return p.r.Close() }

// drainBy lets what is in the pipe be read until t, then ends reads. Where
// the platform has no deadlines on pipes the end waits for the writers.
func (p *stdoutPipe) drainBy(t time.Time) { _ = p.r.SetReadDeadline(t) }

// stdoutDrain is how long the agent's stdout may still be read after the
// process has exited.
const stdoutDrain = 2 * time.Second

// startProcess starts cmd with kandev's pipes on its stdio. watch ends the
// agent's tree when closed: on a failed start, and once the process has
// exited. adopt (nil: none) runs on the started process before it is
// handed out (Windows puts it in its job); if it fails the process is
// killed.
func startProcess(cmd *exec.Cmd, watch io.Closer, args, command []string, adopt func(pid int) error) (*Process, error) {
	fail := func(err error) (*Process, error) {
		_ = watch.Close()
		return nil, fmt.Errorf("start agent %s: %w", strings.Join(command, " "), err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	stdout, err := newStdoutPipe(cmd)
	if err != nil {
		return fail(err)
	}
	p := &Process{cmd: cmd, watch: watch, Stdin: stdin, Stdout: stdout, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{}), Args: args}
	cmd.Stderr = p.stderr
	// Wait copies stderr until every writer is gone; an orphan that escaped
	// the agent's tree must not hold it (nor the owner) forever.
	cmd.WaitDelay = stdoutDrain
	if err := cmd.Start(); err != nil {
		stdout.failed()
		return fail(err)
	}
	if adopt != nil {
		if err := adopt(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			stdout.failed()
			return fail(err)
		}
	}
	stdout.started()
	p.PID = cmd.Process.Pid
	p.Start = proc.ProcessStart(p.PID)
	p.began = time.Now()
	go func() {
		p.err = cmd.Wait()
		p.ended = time.Now()
		stdout.drainBy(p.ended.Add(stdoutDrain))
		p.watch.Close()
		close(p.done)
	}()
	return p, nil
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
	// AgentLock is the session's agent lock, which the agent's supervisor
	// holds for as long as the agent lives ("": none).
	AgentLock string
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

func (p *Process) exitsWithin(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
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
