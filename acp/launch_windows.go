package acp

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/kandev/kandev/internal/proc"
)

// On Windows the agent runs in a Job Object created for it with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: every process it starts is in the
// job too, and the job's one handle is this process's, so the agent and
// everything it started end when that handle closes, by Kill or by this
// process dying, however it dies. No supervisor is needed, and none runs.

// Launch starts the agent in its own Job Object and process group. It is
// created suspended and resumed once it is in the job, so nothing it
// starts can escape the job.
func Launch(spec LaunchSpec) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("%w: the profile has an empty command", ErrAgentNotInstalled)
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s was not found on PATH; install it: %s", ErrAgentNotInstalled, spec.Command[0], spec.Hint)
	}
	args := append([]string{path}, spec.Command[1:]...)
	job, err := newKillOnCloseJob()
	if err != nil {
		return nil, fmt.Errorf("start agent %s: %w", strings.Join(spec.Command, " "), err)
	}
	cmd := exec.Command(path, spec.Command[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), "KANDEV_HOME="+spec.Home, proc.SessionTagEnv+"="+spec.SessionID)
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group, so a console's Ctrl-C reaches kandev only and
	// kandev decides how the agent stops (Stop sends it Ctrl-Break).
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	// Whatever the agent left running ends with the job (closed once it exits).
	return startProcess(cmd, job, args, spec.Command, job.adopt)
}

// Stop ends the agent: close its stdin, then after grace Ctrl-Break to its
// process group (Windows' SIGTERM), then Kill. Some agents (codex-acp) do
// not exit on EOF.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Stdin.Close()
	if p.exitsWithin(grace) {
		return
	}
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.PID)) // only reaches an agent on our console
	if p.exitsWithin(2 * time.Second) {
		return
	}
	p.Kill()
}

// Kill ends the agent and everything it started at once: closing the job
// terminates every process in it.
func (p *Process) Kill() {
	_ = p.watch.Close()
	if p.exitsWithin(500 * time.Millisecond) {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// KillStale stops an agent process left behind by a dead owner, after
// checking that pid is still the process that was recorded. Its job died
// with its owner, so this only finds an agent that was started outside one.
func KillStale(pid int, start string) bool {
	if !proc.ProcessAlive(pid, start) || start == "" {
		return false
	}
	kids := proc.Descendants(pid)
	terminate(pid)
	for _, k := range kids {
		terminate(k)
	}
	for i := 0; i < 100 && proc.ProcessAlive(pid, start); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// KillSessionLeftovers ends processes that an agent of session id started
// and that outlived it. On Windows another process's environment cannot be
// read, so none is found by its tag; the Job Object leaves none.
func KillSessionLeftovers(home, id string) int {
	procs := proc.TaggedProcesses(home)[id]
	for _, pr := range procs {
		terminate(pr.PID)
	}
	return len(procs)
}

// terminate ends process pid at once, as SIGKILL does.
func terminate(pid int) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return
	}
	_ = windows.TerminateProcess(h, 1)
	windows.CloseHandle(h)
}

// jobObject is a Job Object that kills its processes when closed.
type jobObject struct {
	h    windows.Handle
	once sync.Once
}

func newKillOnCloseJob() (*jobObject, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("set up a job object: %w", err)
	}
	return &jobObject{h: h}, nil
}

// adopt puts the suspended process pid in the job, then resumes it.
func (j *jobObject) adopt(pid int) error {
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(j.h, ph); err != nil {
		return fmt.Errorf("put process %d in its job: %w", pid, err)
	}
	return resumeThreads(pid)
}

// Close terminates every process in the job; it may be called more than once.
func (j *jobObject) Close() error {
	var err error
	j.once.Do(func() { err = windows.CloseHandle(j.h) })
	return err
}

// resumeThreads resumes the threads of process pid (a process created
// suspended has one).
func resumeThreads(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list the threads of process %d: %w", pid, err)
	}
	defer windows.CloseHandle(snap)
	resumed := 0
	t := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err := windows.Thread32First(snap, &t); err == nil; err = windows.Thread32Next(snap, &t) {
		if t.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, t.ThreadID)
		if err != nil {
			return fmt.Errorf("resume process %d: %w", pid, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume process %d: %w", pid, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("resume process %d: it has no thread", pid)
	}
	return nil
}
