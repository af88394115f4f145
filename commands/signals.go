package commands

import (
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/acp/owner"
)

// signals turns what the process receives into what it means:
//   - SIGINT (Ctrl-C, on Windows too): the user cancels the running turn;
//     the context ends with owner.ErrInterrupted (exit 130, never continued).
//   - SIGTERM (on Windows: Ctrl-Break, or the console closing): the process
//     is being shut down, not a user decision; the context ends with
//     owner.ErrShutdown (exit 143), the turn is left for one automatic
//     continuation.
//   - a second SIGINT or SIGTERM: abort is closed; the owner kills the agent
//     at once instead of waiting for it.
//   - SIGHUP: the terminal went away; writes to it are discarded from then
//     on and the work goes on to its normal end.
type signals struct {
	ctx   context.Context
	abort chan struct{}
	stop  func()
}

func watchSignals(hangup func()) *signals {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &signals{ctx: ctx, abort: make(chan struct{})}
	ch := takeHeld()
	stopBreak := notifyCtrlBreak(ch) // Windows: Ctrl-Break is SIGTERM
	done := make(chan struct{})
	go func() {
		var aborted sync.Once
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				switch {
				case sig == syscall.SIGHUP:
					hangup()
				case ctx.Err() == nil:
					cancel(causeOf(sig))
				default:
					aborted.Do(func() { close(s.abort) })
				}
			}
		}
	}()
	s.stop = func() {
		signal.Stop(ch)
		stopBreak()
		close(done)
		cancel(nil)
	}
	return s
}

// readOnly marks a command that only reads the home and prints: it needs
// none of the handling above, since a signal that ends it the way it ends
// any reader loses nothing. Watching for signals starts the runtime's signal
// goroutine and, with it, a thread: about a fifth of what list does.
type readOnly interface{ readsOnly() bool }

// signalsFor watches signals for the selected command, unless it only reads.
func signalsFor(cmd *kong.Node, hangup func()) *signals {
	if cmd != nil && cmd.Target.IsValid() && cmd.Target.CanAddr() {
		if r, ok := cmd.Target.Addr().Interface().(readOnly); ok && r.readsOnly() {
			releaseHeld()
			return &signals{ctx: context.Background(), abort: make(chan struct{}), stop: func() {}}
		}
	}
	return watchSignals(hangup)
}

func causeOf(sig os.Signal) error {
	if sig == syscall.SIGTERM {
		return owner.ErrShutdown
	}
	return owner.ErrInterrupted
}

// terminated reports whether the first signal was SIGTERM.
func (s *signals) terminated() bool {
	return context.Cause(s.ctx) == owner.ErrShutdown
}

// hangupWriter passes writes through until the terminal hangs up, then
// discards them: a lost terminal never fails or blocks a turn.
type hangupWriter struct {
	w    io.Writer
	gone atomic.Bool
}

func (h *hangupWriter) Write(p []byte) (int, error) {
	if h.gone.Load() {
		return len(p), nil
	}
	return h.w.Write(p)
}
