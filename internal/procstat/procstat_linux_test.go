package procstat

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStart_IsSetForALiveProcessAndEmptyForAGoneOrZombieOne(t *testing.T) {
	if Start(os.Getpid()) == "" {
		t.Fatal("no start time for this process")
	}
	// The state is the main thread's, which may be running or asleep while
	// another thread runs this test; it is never a zombie's or a dead one's.
	if f := Fields(os.Getpid()); len(f) < 20 || !strings.Contains("RSD", string(f[0])) || len(f[0]) != 1 {
		t.Fatalf("fields of this (live) process: %q", f)
	}
	// A child that exits and is not yet reaped is a zombie.
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	defer syscall.Wait4(pid, nil, 0, nil)
	deadline := time.Now().Add(5 * time.Second)
	for f := Fields(pid); len(f) == 0 || string(f[0]) != "Z"; f = Fields(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie: %q", pid, f)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := Start(pid); s != "" {
		t.Fatalf("a zombie has start %q, want none", s)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	if s := Start(pid); s != "" || Fields(pid) != nil {
		t.Fatalf("a reaped process: start %q, fields %q", s, Fields(pid))
	}
}

func TestChildrenByParent_HoldsAChildUnderThisProcess(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "10"}, &syscall.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/sleep:", err)
	}
	defer func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Wait4(pid, nil, 0, nil) }()
	if !slices.Contains(Pids(), pid) {
		t.Fatalf("Pids has no %d", pid)
	}
	if got := ChildrenByParent()[os.Getpid()]; !slices.Contains(got, pid) {
		t.Fatalf("children of this process %v, want %d among them", got, pid)
	}
	if got := Below(ChildrenByParent(), os.Getpid()); !slices.Contains(got, pid) {
		t.Fatalf("below this process %v, want %d among them", got, pid)
	}
}
