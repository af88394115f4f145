// Package wiretrace copies what one side of an ACP connection reads and
// writes to files, when KANDEV_WIRE_TRACE names a directory: the bytes it
// read to <dir>/<role>-<pid>-<random>.in and the bytes it wrote to the matching
// .out, unchanged and in order. It is how the end-to-end tests check every
// message kandev acp and the demo agent send against the published protocol
// (internal/acpconform), and a way to see a conversation when debugging.
// Unset, Wrap returns its streams as they are and costs nothing.
//
// The files hold the conversation as it was, secrets included: point it at
// a directory of your own, never at a shared one.
package wiretrace

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Env is the variable that names the trace directory.
const Env = "KANDEV_WIRE_TRACE"

// Wrap returns r and w traced under role ("acp", "demo-agent") when Env is
// set; a trace that cannot be opened is skipped, never an error of the
// connection.
func Wrap(role string, r io.Reader, w io.Writer) (io.Reader, io.Writer) {
	dir := os.Getenv(Env)
	if dir == "" {
		return r, w
	}
	// A new pair of files each time (a pid is used again by a later process).
	out, err := os.CreateTemp(dir, fmt.Sprintf("%s-%d-*.out", role, os.Getpid()))
	if err != nil {
		return r, w
	}
	in, err := os.OpenFile(strings.TrimSuffix(out.Name(), ".out")+".in", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		out.Close()
		return r, w
	}
	return io.TeeReader(r, in), &tracedWriter{w: w, trace: out}
}

// tracedWriter writes to w, then what w took to trace.
type tracedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	trace io.Writer
}

func (t *tracedWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.w.Write(p)
	_, _ = t.trace.Write(p[:n])
	return n, err
}
