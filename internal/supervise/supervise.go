//go:build unix

// Package supervise is the agent's supervisor: kandev itself, started by
// the owner (acp.Launch) with Env set and the agent's command line as
// arguments. It exists because the agent is often a wrapper (sh -c, an npm
// shim) whose real work runs in children: a signal on the owner's death
// reaches only a direct child, so something that outlives the owner by a
// moment must end the rest. It:
//   - leads the agent's process group and runs the agent in it, handing the
//     agent its stdio and keeping none for itself;
//   - watches fd 3, a pipe whose only writer is the owner: EOF means the
//     owner closed it or died, however it died (SIGKILL included);
//   - on that EOF kills the agent, everything it started and itself at once;
//   - when the agent exits, kills every process the agent left behind and
//     exits the way the agent did.
//
// Finding "every process" is platform detail (supervise_*.go): on Linux the
// supervisor is a child subreaper, so orphans of the agent's tree are
// reparented to it and its process tree is complete; on macOS, which has no
// subreaper, orphans are found by an environment tag unique to this launch.
//
// kandev's main enters the supervisor (Main) before anything else, when the
// environment marks the process as one (Env).
package supervise

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Env marks a kandev process started as an agent's supervisor.
const Env = "KANDEV_AGENT_SUPERVISOR"

// LaunchTagEnv tags every process of one launch (see leftovers on macOS).
const LaunchTagEnv = "KANDEV_AGENT_LAUNCH"

// LockEnv names the session's agent lock, which the supervisor holds until
// the agent's tree is gone: an owner that returned before its agent had
// stopped leaves the next owner waiting on it (state.AwaitAgentGone). While
// the agent runs the lock file is one byte long (a hole: no data is written,
// no block taken, so a full disk cannot refuse it); the supervisor empties it
// once it knows that no process of the agent's is left, so a lock file that
// is not empty and not locked says a supervisor was killed before it could
// end the agent's tree (state.AgentLeftoversPossible): only then is the
// machine's process list worth reading for leftovers.
const LockEnv = "KANDEV_AGENT_LOCK"

// StopRequest is what an owner writes on the watch pipe to hand the agent's
// shutdown to the supervisor and return at once: the agent has its stdin
// closed, gets grace to exit on its own, then SIGTERM, then SIGKILL. EOF
// without it still means the owner died: everything is killed at once.
const StopRequest = "stop-after-ms "

// Main runs this process as an agent's supervisor and exits when acp.Launch
// started it as one (Env is set); otherwise it returns at once. kandev's main
// calls it first, and so does the TestMain of a test binary that launches
// agents.
func Main() {
	if os.Getenv(Env) == "" {
		return
	}
	os.Exit(supervise(os.Args[1:]))
}

// supervise runs the agent args and returns the exit code to leave with.
func supervise(args []string) int {
	// Pdeathsig (Linux) follows the thread that started the child: keep it.
	runtime.LockOSThread()
	watch := os.NewFile(3, "owner-watch")
	syscall.CloseOnExec(3)
	os.Unsetenv(Env) // the agent may be kandev too (the demo agent)
	lock := -1
	if path := os.Getenv(LockEnv); path != "" {
		os.Unsetenv(LockEnv)
		lock = holdLock(path)
		defer syscall.Close(lock) // the lock goes with the descriptor
	}
	launch := LaunchTagEnv + "=" + strconv.FormatUint(rand.Uint64(), 16)
	if len(args) == 0 {
		os.Stderr.WriteString("kandev: the agent supervisor needs a command\n")
		return 2
	}
	becomeSubreaper()
	// syscall.ForkExec, not os.StartProcess: the supervisor needs only the
	// pid, and os would first probe pidfd support with a child of its own.
	pid, err := syscall.ForkExec(args[0], args, &syscall.ProcAttr{
		Env:   append(os.Environ(), launch),
		Files: []uintptr{0, 1, 2},
		Sys:   agentSysProcAttr(),
	})
	if err != nil {
		os.Stderr.WriteString("kandev: start agent " + args[0] + ": " + err.Error() + "\n")
		markClean(lock)
		return 127
	}
	// Signals for the agent reach the whole group; the supervisor outlasts
	// them and leaves when the agent does. Caught, not ignored: an ignored
	// signal would stay ignored in the agent, and exitLike could not die of
	// it. Caught once the agent is started, not before: catching starts the
	// runtime's signal goroutine and a thread (0.4 ms), which then overlap
	// the agent's own start instead of delaying it. Before that, a signal
	// for the group ends the supervisor, and with it (Pdeathsig) the agent
	// the signal was for.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	os.Stdin.Close()
	os.Stdout.Close()
	ownerGone := make(chan struct{})
	stop := make(chan time.Duration, 1)
	go func() {
		if grace, ok := readStopRequest(watch); ok {
			stop <- grace // the owner has returned; its EOF is no death
			return
		}
		close(ownerGone)
	}()
	exited := make(chan syscall.WaitStatus, 1)
	go func() { exited <- reapUntil(pid) }()
	var status syscall.WaitStatus
	select {
	case status = <-exited:
	case grace := <-stop:
		status = stopGently(exited, grace, launch)
	case <-ownerGone:
		killAll(launch) // the lock file stays marked: the next owner looks for leftovers
		sweep(launch)
		return exitLike(status)
	}
	if nothingLeft() { // the common end: no process list to read
		markClean(lock)
		return exitLike(status)
	}
	if sweep(launch) {
		markClean(lock)
	}
	return exitLike(status)
}

// holdLock takes the agent lock at path for as long as the supervisor
// lives (created 0600 when missing, never through a symbolic link, as
// state's locks) and marks it (its size becomes 1, see LockEnv). It returns
// the descriptor, or -1 when the lock is held elsewhere (the previous agent
// is still stopping and the owner stopped waiting for it) or cannot be
// opened: then this launch neither holds nor marks it.
func holdLock(path string) int {
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return -1
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		return -1
	}
	_ = syscall.Ftruncate(fd, 1) // the mark: a one-byte hole, which takes no block even on a full disk
	return fd
}

// markClean empties the lock file: no process of this launch is left.
// Nothing is synced: the mark only has to outlive this process, and no
// process outlives a power loss.
func markClean(lock int) {
	if lock >= 0 {
		_ = syscall.Ftruncate(lock, 0)
	}
}

// readStopRequest reads the watch pipe to its end and reports the owner's
// stop request, if it wrote one before closing it.
func readStopRequest(watch io.Reader) (time.Duration, bool) {
	b, _ := io.ReadAll(io.LimitReader(watch, 64))
	_, _ = io.Copy(io.Discard, watch)
	ms, ok := bytes.CutPrefix(bytes.TrimSpace(b), []byte(StopRequest))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(ms))
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// stopGently ends an agent whose owner has returned: its stdin is closed
// already; after grace its group gets SIGTERM (the supervisor catches it),
// and two seconds later everything is killed.
func stopGently(exited <-chan syscall.WaitStatus, grace time.Duration, launch string) syscall.WaitStatus {
	select {
	case ws := <-exited:
		return ws
	case <-time.After(grace):
	}
	if syscall.Getpgrp() == os.Getpid() {
		_ = syscall.Kill(0, syscall.SIGTERM)
	}
	select {
	case ws := <-exited:
		return ws
	case <-time.After(2 * time.Second):
	}
	killAll(launch)
	return <-exited
}

// killAll ends everything at once when the owner is gone, itself included,
// so that nothing of the session is alive a moment after its owner died:
// the processes outside the group first, then the whole group (the agent
// and the supervisor). Whatever it misses, sweep gets if the supervisor is
// still there.
func killAll(launch string) {
	KillGroups(leftovers(launch))
	if syscall.Getpgrp() == os.Getpid() { // the group is the agent's, never a caller's
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
}

// KillGroups SIGKILLs each pid's process group (unless it is ours) and the
// pid itself.
func KillGroups(pids []int) {
	own := syscall.Getpgrp()
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != own {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// reapUntil waits for children (orphans reparented here included) until pid
// exits, and returns its status.
func reapUntil(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got == pid {
			return ws
		}
	}
}

// sweep kills every process the agent left behind and reaps them, for two
// seconds at most (a process stuck in the kernel cannot hold kandev longer).
// It reports whether none is left.
func sweep(launch string) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		left := leftovers(launch)
		KillGroups(left)
		reaped := false
		for {
			got, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.ECHILD && len(left) == 0 {
				return true
			}
			if got <= 0 {
				break
			}
			reaped = true
		}
		if !reaped {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return false
}

// exitLike leaves the way the agent did: the same exit code, or the same
// signal, so the owner's report names the agent's end.
func exitLike(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // the signal lands; a stopped or ignored one falls through
	return 128 + int(sig)
}

// ownLeftovers are the supervisor's descendants still alive.
func ownLeftovers() []int {
	var out []int
	for _, pid := range descendants(os.Getpid()) {
		if processStart(pid) != "" {
			out = append(out, pid)
		}
	}
	return out
}
