//go:build unix

package commands

import (
	"os"
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
