package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// DefaultTimeout bounds a [notify] command that sets no timeout_seconds.
const DefaultTimeout = 10 * time.Second

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
// own process session gets n on stdin and runs the command with it, killed
// after the timeout. Nothing the hook does (hang, fail, never read stdin)
// reaches the caller; only failing to start the runner is an error.
func (h Hook) Send(n Note) error {
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
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	body, _ := json.Marshal(n)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// One small write fits the pipe's buffer: it never waits for the reader.
	_, werr := w.Write(append(body, '\n'))
	w.Close()
	if werr != nil {
		return werr
	}
	args := append([]string{RunnerCommand, "--timeout", strconv.FormatInt(timeout.Milliseconds(), 10) + "ms", "--"}, h.Command...)
	cmd := exec.Command(exe, args...)
	cmd.Stdin = r
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped while this process lives; orphaned to init after
	return nil
}

// Run is the runner: it runs command with stdin, its output discarded, and
// kills its process group once timeout has passed.
func Run(stdin io.Reader, command []string, timeout time.Duration) error {
	if len(command) == 0 {
		return errors.New("no command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = time.Second
	return cmd.Run()
}
