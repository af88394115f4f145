//go:build unix

package acp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/internal/supervise"
)

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
	cmd := exec.Command(supervise.SelfExe(), args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+spec.Home, proc.SessionTagEnv+"="+spec.SessionID, supervise.Env+"=1")
	if spec.AgentLock != "" {
		cmd.Env = append(cmd.Env, supervise.LockEnv+"="+spec.AgentLock)
	}
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.ExtraFiles = []*os.File{watchR} // fd 3 in the supervisor
	// Own process group, so a terminal's Ctrl-C reaches kandev only and
	// kandev decides how the agent stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startProcess(cmd, watchW, args, spec.Command, nil)
}

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

// StopAfterReturn hands the agent's shutdown to its supervisor and returns
// at once: its stdin is closed, and the supervisor signals it after grace
// (Stop's steps), then ends whatever it left; the supervisor holds the
// session's agent lock until all of it is gone.
func (p *Process) StopAfterReturn(grace time.Duration) bool {
	w, ok := p.watch.(io.Writer)
	if !ok {
		return false
	}
	if _, err := fmt.Fprintf(w, "%s%d\n", supervise.StopRequest, grace.Milliseconds()); err != nil {
		return false // the supervisor is gone already
	}
	_ = p.watch.Close()
	_ = p.Stdin.Close()
	return true
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
	kids := proc.Descendants(p.PID)
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	<-p.done
	supervise.KillGroups(kids)
}

// KillStale stops an agent process left behind by a dead owner, after
// checking that pid is still the process that was recorded.
func KillStale(pid int, start string) bool {
	if !proc.ProcessAlive(pid, start) || start == "" {
		return false
	}
	kids := proc.Descendants(pid)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	supervise.KillGroups(kids)
	for i := 0; i < 100 && proc.ProcessAlive(pid, start); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// KillSessionLeftovers ends processes that an agent of session id started
// and that outlived it: every agent is launched with the session tag in its
// environment, which its children inherit. The supervisor normally leaves
// none; this covers one that was itself killed with SIGKILL.
func KillSessionLeftovers(home, id string) int {
	procs := proc.TaggedProcesses(home)[id]
	for _, pr := range procs {
		_ = syscall.Kill(pr.PID, syscall.SIGKILL)
	}
	return len(procs)
}
