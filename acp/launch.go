package acp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
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
	// SessionID tags the agent's environment so leftovers can be found later.
	SessionID string
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
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+spec.Home, sessionEnv+"="+spec.SessionID)
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

// Stop ends the agent: close its stdin, then after grace SIGTERM to its
// group, then SIGKILL. Some agents (codex-acp) do not exit on EOF. Processes
// the agent started in sessions of their own are ended with it.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Stdin.Close()
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	kids := descendants(p.PID)
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-p.PID, syscall.SIGKILL)
		<-p.done
	}
	killGroups(kids)
}

// Kill ends the agent's whole process group and its descendants at once.
func (p *Process) Kill() {
	kids := descendants(p.PID)
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	<-p.done
	killGroups(kids)
}

// KillStale stops an agent process left behind by a dead owner, after
// checking that pid is still the process that was recorded.
func KillStale(pid int, start string) bool {
	if !state.ProcessAlive(pid, start) || start == "" {
		return false
	}
	kids := descendants(pid)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	killGroups(kids)
	for i := 0; i < 100 && state.ProcessAlive(pid, start); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// KillSessionLeftovers ends processes that an agent of session id started
// and that outlived it (reparented after the owner was SIGKILLed): every
// agent is launched with KANDEV_SESSION_ID in its environment, which its
// children inherit. Only called when the previous owner did not clean up.
func KillSessionLeftovers(id string) int {
	needle := []byte(sessionEnv + "=" + id + "\x00")
	self := os.Getpid()
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		if state.ProcessStart(pid) == "" { // gone or a zombie
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		n++
	}
	return n
}

// sessionEnv tags an agent and everything it starts with the session id.
const sessionEnv = "KANDEV_SESSION_ID"

// descendants lists the pids below pid in the process tree.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(string(f[1])); err == nil {
			children[pp] = append(children[pp], c)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killGroups SIGKILLs each pid's process group and the pid itself.
func killGroups(pids []int) {
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 {
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
