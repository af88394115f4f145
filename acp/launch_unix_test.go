//go:build unix

package acp

import (
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/proc"
)

func TestLaunch_ReadsOfAnExitedAgentsOutputEndEvenIfAnOrphanHoldsIt(t *testing.T) {
	// A SIGKILLed supervisor sweeps nothing: the agent dies with it, but the
	// sleep it started is orphaned and keeps the pipe open. Reads must
	// still end, after the drain.
	p, id := launchSh(t, "sleep 1000 & echo started; wait")
	waitTaggedCount(t, id, 3) // supervisor, sh, sleep
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	if !p.exitsWithin(10 * time.Second) {
		t.Fatal("the supervisor did not exit")
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(p.Stdout); done <- err }()
	select {
	case <-done:
	case <-time.After(stdoutDrain + 5*time.Second):
		t.Fatal("reading the exited agent's output never ended")
	}
	if left := proc.TaggedProcesses(testHome)[id]; len(left) != 1 {
		t.Fatalf("want the orphaned sleep still running (what holds the pipe), have %+v", left)
	}
}
