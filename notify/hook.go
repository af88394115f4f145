package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultTimeout bounds a [notify] command that sets no timeout_seconds.
const DefaultTimeout = 10 * time.Second

// MaxSummaryBytes bounds a note's summary (and title): a longer one is cut
// and says so (Bound), so a note is always a few kilobytes whatever the
// agent wrote in a tool title.
const MaxSummaryBytes = 4 << 10

// RunnerCommand is the hidden kandev command that runs a hook (Hook.Send
// starts it; users never run it).
const RunnerCommand = "__notify"

// Hook is the user's [notify] command.
type Hook struct {
	Command []string
	Timeout time.Duration
	// Kandev is this kandev's executable, which runs the command detached
	// ("" is os.Executable).
	Kandev string
}

// Send starts the hook for n and returns at once: a kandev runner in its
// own process session gets n on stdin, written by a goroutine of its own
// and given up after the timeout, and runs the command with it, killed after
// the timeout. Nothing the hook does (hang, fail, never read stdin) blocks
// the caller; only failing to start the runner is an error. failed, when
// not nil, is called from another goroutine with the *Failure once the hook
// has failed (while this process lives).
func (h Hook) Send(n Note, failed func(error)) error {
	if len(h.Command) == 0 {
		return nil
	}
	exe := h.Kandev
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	timeout := h.timeout()
	body, _ := json.Marshal(Bound(n))
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	args := append([]string{RunnerCommand, "--timeout", strconv.FormatInt(timeout.Milliseconds(), 10) + "ms", "--"}, h.Command...)
	cmd := exec.Command(exe, args...)
	cmd.Stdin = r
	cmd.SysProcAttr = detachedAttr()
	err = cmd.Start()
	r.Close() // the runner has its own copy
	if err != nil {
		w.Close()
		return err
	}
	writing.Add(1)
	go func() {
		// A hook that never reads its stdin leaves this write waiting: the
		// timer gives it up, and the runner's end closing ends it too.
		giveUp := time.AfterFunc(timeout+time.Second, func() { w.Close() })
		_, _ = w.Write(append(body, '\n'))
		giveUp.Stop()
		w.Close()
		writing.Done()
		err := cmd.Wait() // reaped while this process lives; orphaned to init after
		if f := failureOf(err, timeout); f != nil && failed != nil {
			failed(f)
		}
	}()
	return nil
}

// writing counts the notes whose write to their runner is under way.
var writing sync.WaitGroup

// Flush waits, at most max, until every note Send started has been handed
// to its runner: a process that exits right after a Send (an owner that ends
// with its turn) would otherwise take the note with it.
func Flush(max time.Duration) {
	done := make(chan struct{})
	go func() { writing.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(max):
	}
}

func (h Hook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return h.Timeout
}

// Bound is n with its summary and title cut to MaxSummaryBytes, each cut
// saying how much was left out and where the whole text is.
func Bound(n Note) Note {
	n.Summary = cut(n.Summary, n.Session)
	n.Title = cut(n.Title, n.Session)
	return n
}

func cut(s, session string) string {
	if len(s) <= MaxSummaryBytes {
		return s
	}
	more := " … [cut: " + strconv.Itoa(len(s)) + " bytes; kandev events " + session + " shows all] … "
	keep := MaxSummaryBytes - len(more)
	head, tail := keep*3/4, keep/4 // the end often holds the advice (kandev approve ID)
	return validUTF8Prefix(s[:head]) + more + validUTF8Suffix(s[len(s)-tail:])
}

// validUTF8Prefix drops the partial rune a byte cut left at s's end.
func validUTF8Prefix(s string) string {
	for i := 0; i < 3 && s != ""; i++ {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// validUTF8Suffix drops the partial rune a byte cut left at s's start.
func validUTF8Suffix(s string) string {
	for i := 0; i < 3 && s != ""; i++ {
		if r, size := utf8.DecodeRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[1:]
	}
	return s
}

// Kinds of hook failure (Failure.Kind).
const (
	FailExit    = "exit"    // the command exited with a non-zero status or was killed
	FailTimeout = "timeout" // it ran past its timeout and was killed
	FailStart   = "start"   // it could not start: not found, not executable
)

// The runner reports a failure by its exit status, as timeout(1) and the
// shells do: 124 the hook timed out, 126/127 it could not start, any other
// non-zero status the hook's own.
const (
	statusTimeout  = 124
	statusNoStart  = 127
	statusSignaled = 125
)

// Failure is why a hook failed.
type Failure struct {
	Kind    string
	Status  int           // FailExit: the hook's exit status (-1: killed by a signal)
	Timeout time.Duration // FailTimeout
	Err     error         // FailStart: why, in the runner (nil when read from its status)
}

func (f *Failure) Error() string {
	switch f.Kind {
	case FailTimeout:
		return fmt.Sprintf("the [notify] command timed out after %s and was killed", f.Timeout)
	case FailStart:
		if f.Err != nil {
			return "the [notify] command could not start: " + f.Err.Error()
		}
		return "the [notify] command could not start (not found or not executable)"
	}
	if f.Status < 0 {
		return "the [notify] command was killed by a signal"
	}
	return fmt.Sprintf("the [notify] command exited with status %d", f.Status)
}

// ExitCode is the runner's exit status for f.
func (f *Failure) ExitCode() int {
	switch f.Kind {
	case FailTimeout:
		return statusTimeout
	case FailStart:
		return statusNoStart
	}
	if f.Status <= 0 || f.Status > 255 {
		return statusSignaled
	}
	return f.Status
}

// failureOf reads the runner's end: nil when the hook succeeded.
func failureOf(err error, timeout time.Duration) *Failure {
	var ee *exec.ExitError
	if err == nil || !errors.As(err, &ee) {
		return nil // the runner could not be waited for: nothing to say about the hook
	}
	switch code := ee.ExitCode(); code {
	case statusTimeout:
		return &Failure{Kind: FailTimeout, Timeout: timeout}
	case statusNoStart, 126:
		return &Failure{Kind: FailStart}
	case statusSignaled, -1:
		return &Failure{Kind: FailExit, Status: -1}
	default:
		return &Failure{Kind: FailExit, Status: code}
	}
}

// Run is the runner: it runs command with stdin, its output discarded, and
// kills its process group once timeout has passed. Its error is a *Failure.
func Run(stdin io.Reader, command []string, timeout time.Duration) error {
	if len(command) == 0 {
		return &Failure{Kind: FailStart, Err: errors.New("no command")}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return &Failure{Kind: FailStart, Err: err}
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		return &Failure{Kind: FailTimeout, Timeout: timeout}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &Failure{Kind: FailExit, Status: ee.ExitCode()}
	}
	if err != nil {
		return &Failure{Kind: FailExit, Status: -1, Err: err}
	}
	return nil
}
