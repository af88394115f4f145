//go:build unix

package acp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/state"
)

// The supervisor is kandev itself, started by Launch with superviseEnv set
// and the agent's command line as arguments. It exists because the agent is
// often a wrapper (sh -c, an npm shim) whose real work runs in children: a
// signal on the owner's death reaches only a direct child, so something
// that outlives the owner by a moment must end the rest. It:
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

// superviseEnv marks a kandev process started as an agent's supervisor.
const superviseEnv = "KANDEV_AGENT_SUPERVISOR"

// launchTagEnv tags every process of one launch (see leftovers on macOS).
const launchTagEnv = "KANDEV_AGENT_LAUNCH"

// agentLockEnv names the session's agent lock, which the supervisor holds
// until the agent's tree is gone: an owner that returned before its agent
// had stopped leaves the next owner waiting on it (state.AwaitAgentGone).
const agentLockEnv = "KANDEV_AGENT_LOCK"

// stopRequest is what an owner writes on the watch pipe to hand the
// agent's shutdown to the supervisor and return at once: the agent has its
// stdin closed, gets grace to exit on its own, then SIGTERM, then SIGKILL.
// EOF without it still means the owner died: everything is killed at once.
const stopRequest = "stop-after-ms "

// init turns any binary that links this package (kandev, and test binaries
// that launch agents) into a supervisor when started as one by Launch.
func init() {
	if os.Getenv(superviseEnv) == "" {
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
	os.Unsetenv(superviseEnv) // the agent may be kandev too (the demo agent)
	if path := os.Getenv(agentLockEnv); path != "" {
		os.Unsetenv(agentLockEnv)
		release, _ := state.HoldAgentLock(path)
		defer release()
	}
	tag := make([]byte, 8)
	_, _ = rand.Read(tag)
	launch := launchTagEnv + "=" + hex.EncodeToString(tag)
	// Signals for the agent reach the whole group; the supervisor outlasts
	// them and leaves when the agent does. Caught, not ignored: an ignored
	// signal would stay ignored in the agent.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "kandev: the agent supervisor needs a command")
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
		fmt.Fprintf(os.Stderr, "kandev: start agent %s: %v\n", args[0], err)
		return 127
	}
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
		killAll(launch)
		sweep(launch)
		return exitLike(status)
	}
	if nothingLeft() { // the common end: no process list to read
		return exitLike(status)
	}
	sweep(launch)
	return exitLike(status)
}

// readStopRequest reads the watch pipe to its end and reports the owner's
// stop request, if it wrote one before closing it.
func readStopRequest(watch io.Reader) (time.Duration, bool) {
	b, _ := io.ReadAll(io.LimitReader(watch, 64))
	_, _ = io.Copy(io.Discard, watch)
	ms, ok := strings.CutPrefix(strings.TrimSpace(string(b)), stopRequest)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(ms)
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
	killGroups(leftovers(launch))
	if syscall.Getpgrp() == os.Getpid() { // the group is the agent's, never a caller's
		_ = syscall.Kill(0, syscall.SIGKILL)
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
func sweep(launch string) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		left := leftovers(launch)
		killGroups(left)
		reaped := false
		for {
			got, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.ECHILD && len(left) == 0 {
				return
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
	for _, pid := range state.Descendants(os.Getpid()) {
		if state.ProcessStart(pid) != "" {
			out = append(out, pid)
		}
	}
	return out
}
