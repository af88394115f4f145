package acp

import (
	"io"
	"time"
)

// Transport is a running agent as the owner drives it: the two ACP
// streams, what identifies it, and how it ends. An OS process (*Process)
// is one; tests run the demo agent in-process over pipes.
type Transport interface {
	// Streams are the agent's input and output.
	Streams() (stdin io.WriteCloser, stdout io.ReadCloser)
	// Identity is the process id and start time recorded for a later owner
	// to stop a leftover agent; 0 and "" when there is no process.
	Identity() (pid int, start string)
	// CommandLine is what it was started with (for agent_started).
	CommandLine() []string
	// Done is closed when the agent has ended.
	Done() <-chan struct{}
	// ExitedWithin reports whether it ended less than d after it started.
	ExitedWithin(d time.Duration) bool
	// ExitDescription says how it ended ("" while it runs).
	ExitDescription() string
	// Stderr is the tail of what it wrote besides the protocol.
	Stderr() string
	// Stop ends it gently (close its input, then signals after grace);
	// Kill ends it and everything it started at once.
	Stop(grace time.Duration)
	Kill()
}

// Launcher starts an agent for the owner.
type Launcher func(LaunchSpec) (Transport, error)

// LaunchProcess is the default Launcher: the agent as an OS process (Launch).
func LaunchProcess(spec LaunchSpec) (Transport, error) {
	p, err := Launch(spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Streams gives the process's stdin and stdout pipes.
func (p *Process) Streams() (io.WriteCloser, io.ReadCloser) { return p.Stdin, p.Stdout }

// Identity is the pid and its start time (from /proc).
func (p *Process) Identity() (int, string) { return p.PID, p.Start }

// CommandLine is the agent's command line as launched.
func (p *Process) CommandLine() []string { return p.Args }

// Reattachable is a transport that may connect to an agent an earlier
// kandev process started and left running (a container's relay,
// docs/containers.md).
type Reattachable interface {
	// Reattached says whether an earlier client initialized the agent, and
	// the id of the newest session/prompt an earlier client sent whose
	// answer is still to be recorded ("": none); that answer arrives as a
	// RelayOrphanMethod notification with this id (Conn.AwaitPrompt).
	Reattached() (initialized bool, prompt string)
}

// Acker is a transport that keeps what the agent wrote until kandev has
// recorded it: Ack says the first lines of the stream are recorded.
type Acker interface {
	Ack(lines int64)
}

// Methods a relay adds to the agent's stream (never the agent's own).
const (
	// RelayAckMethod carries Acker's acknowledgement to the relay.
	RelayAckMethod = "_kandev/relay/ack"
	// RelayOrphanMethod carries the agent's answer to a request an earlier
	// client sent: params {id, method, response}.
	RelayOrphanMethod = "_kandev/relay/orphan"
)
