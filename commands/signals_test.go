//go:build unix

package commands

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// A command that only reads starts no signal watcher (a signal ends it the
// default way); every other command, and events --follow, gets one, so that
// SIGTERM and Ctrl-C end its context with their meaning.
func TestSignalsFor_OnlyCommandsThatOnlyReadGoWithoutAWatcher(t *testing.T) {
	cases := []struct {
		name    string
		cmd     any
		watched bool
	}{
		{"list", &listCmd{}, false},
		{"status", &statusCmd{}, false},
		{"transcript", &transcriptCmd{}, false},
		{"events", &eventsCmd{}, false},
		{"events --follow", &eventsCmd{Follow: true}, true},
		{"prompt", &promptCmd{}, true},
		{"resume", &resumeCmd{}, true},
		{"import", &importCmd{}, true},
		{"wait", &waitCmd{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node := &kong.Node{Target: reflect.ValueOf(c.cmd).Elem()}
			s := signalsFor(node, func() {})
			defer s.stop()
			if !c.watched {
				if s.ctx.Done() != nil {
					t.Fatal("a read-only command got a context that signals can end")
				}
				return
			}
			// A real SIGTERM to this process ends the context as a shutdown.
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-s.ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("SIGTERM did not end the watched command's context")
			}
			if !s.terminated() {
				t.Fatalf("the context ended with %v, want a shutdown", s.ctx.Err())
			}
		})
	}
}

// A SIGHUP that comes while the process starts (held since main's first
// line) reaches the command's watcher once it exists: the terminal is
// dropped and the work goes on, instead of the process dying of it.
func TestHeldSignals_ASIGHUPBeforeTheWatcherReachesIt(t *testing.T) {
	HoldSignals()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	hung := make(chan struct{})
	s := signalsFor(&kong.Node{Target: reflect.ValueOf(&promptCmd{}).Elem()}, func() { close(hung) })
	defer s.stop()
	select {
	case <-hung:
	case <-time.After(5 * time.Second):
		t.Fatal("the SIGHUP held before the watcher never reached it")
	}
	if s.ctx.Err() != nil {
		t.Fatalf("a SIGHUP ended the command's context: %v", context.Cause(s.ctx))
	}
}

// A command that only reads gives held signals back: one that came while
// it started ends it as it would have without kandev holding it.
func TestHeldSignals_AReadOnlyCommandDiesOfAHeldSignal(t *testing.T) {
	if os.Getenv("KANDEV_HELD_CHILD") == "1" {
		HoldSignals()
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(100 * time.Millisecond) // the runtime has taken it into the held channel
		signalsFor(&kong.Node{Target: reflect.ValueOf(&listCmd{}).Elem()}, func() {})
		os.Exit(0) // not reached: the held SIGTERM ends the process
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeldSignals_AReadOnlyCommandDiesOfAHeldSignal$")
	cmd.Env = append(os.Environ(), "KANDEV_HELD_CHILD=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the child exited with %v, want it killed by SIGTERM", err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the child ended with %v, want death by SIGTERM", ws)
	}
}
