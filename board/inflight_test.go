package board

import (
	"errors"
	"os/exec"
	"testing"
	"time"
)

func TestInflight_QuittingLetsAQuickActionFinishAndStopsASlowOne(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("SKIP: no sleep command")
	}
	var f inflight
	quick, slow := make(chan error, 1), make(chan error, 1)
	go func() { quick <- f.run(exec.Command(sleep, "0.2")) }()
	go func() { slow <- f.run(exec.Command(sleep, "60")) }()
	time.Sleep(100 * time.Millisecond) // both started
	began := time.Now()
	f.finish(time.Second)
	if err := <-quick; err != nil {
		t.Fatalf("the quick action did not finish: %v", err)
	}
	if err := <-slow; err == nil {
		t.Fatal("the slow action was not stopped")
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("finish took %v", d)
	}
	if err := f.run(exec.Command(sleep, "0")); !errors.Is(err, errQuitting) {
		t.Fatalf("an action after quitting: %v", err)
	}
}
