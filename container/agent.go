package container

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/config"
)

// RelayDir is where session id's relay keeps its socket, its state and the
// agent's stderr, on the host (mounted in the container at RelayPath).
func RelayDir(homeDir, id string) string {
	return filepath.Join(homeDir, "sessions", id+".relay")
}

// helloTimeout bounds the wait for a relay's first line.
const helloTimeout = 15 * time.Second

// Launcher is an acp.Launcher that runs the agent in the session's
// container: it finds the container by its labels and attaches to the
// agent that runs there, starts a stopped one again (a new agent: the
// owner restores the conversation), or creates one.
func Launcher(cfg config.RuntimeConfig, homeDir string) acp.Launcher {
	return func(spec acp.LaunchSpec) (acp.Transport, error) {
		return Launch(context.Background(), cfg, homeDir, spec)
	}
}

// Launch is Launcher's work for one launch.
func Launch(ctx context.Context, cfg config.RuntimeConfig, homeDir string, spec acp.LaunchSpec) (*Agent, error) {
	eng, err := FindEngine(cfg.Engine)
	if err != nil {
		return nil, err
	}
	home := HomeHash(homeDir)
	dir := RelayDir(homeDir, spec.SessionID)
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := eng.Find(ctx, home, spec.SessionID)
	if err != nil {
		return nil, err
	}
	if c != nil && !c.Running() {
		if err := eng.Start(ctx, c.ID); err != nil {
			// One that cannot start again (its kandev binary moved, a mount
			// gone) is replaced: its agent is gone either way.
			if rerr := eng.Remove(ctx, c.ID); rerr != nil {
				return nil, err
			}
			c = nil
		}
	}
	if c == nil {
		id, err := eng.Run(ctx, runSpec(cfg, home, dir, spec))
		if err != nil {
			return nil, err
		}
		c = &Container{ID: id, Session: spec.SessionID, State: "running"}
	}
	a, err := attachTo(eng, c.ID, dir, spec.Command)
	if err != nil {
		return nil, err
	}
	a.began = began
	return a, nil
}

// runSpec is the container of spec: the agent's command with this kandev
// binary at its path inside, only the session's cwd and the configured
// mounts, and only the environment the profile names.
func runSpec(cfg config.RuntimeConfig, home, dir string, spec acp.LaunchSpec) RunSpec {
	self, _ := os.Executable()
	exe := self
	if p, err := filepath.EvalSymlinks(self); err == nil {
		exe = p // the file itself is mounted, not a link to it
	}
	command := append([]string(nil), spec.Command...)
	for i, a := range command {
		if a == self || a == exe { // {kandev}: the demo agent runs from the mounted copy
			command[i] = ExePath
		}
	}
	env := map[string]string{"KANDEV_HOME": RelayPath + "/home"}
	for k, v := range spec.Env {
		env[k] = v
	}
	return RunSpec{Home: home, Session: spec.SessionID, Image: cfg.Image, Rootfs: cfg.Rootfs, Network: cfg.Network,
		Cwd: spec.Dir, Mounts: cfg.Mounts, Exe: exe, RelayDir: dir, Env: env, Command: command}
}

// Agent is the agent in a container as the owner drives it: its stdio is
// the relay's stream, reached through the engine's exec. It ends (Done)
// when that stream ends; Stop and Kill stop the container.
type Agent struct {
	eng     *Engine
	ID      string // the container's
	dir     string
	args    []string
	hello   Hello
	cmd     *exec.Cmd
	wmu     sync.Mutex
	stdin   io.WriteCloser
	stdout  io.ReadCloser
	errTail *strings.Builder
	done    chan struct{}
	began   time.Time
	ended   time.Time
	stopped atomic.Bool // Stop or Kill stopped the container
}

// attachTo runs the relay's client in container id and reads its hello.
func attachTo(eng *Engine, id, dir string, args []string) (*Agent, error) {
	argv := eng.ExecArgs(id, ExePath, relayCommand, "attach", RelayPath)
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errTail := &strings.Builder{}
	cmd.Stderr = &limitWriter{b: errTail, max: 16 << 10}
	if err := cmd.Start(); err != nil {
		return nil, &EngineError{Engine: eng.Name, Problem: err.Error()}
	}
	a := &Agent{eng: eng, ID: id, dir: dir, args: args, cmd: cmd, stdin: stdin, errTail: errTail, done: make(chan struct{})}
	br := bufio.NewReaderSize(stdout, 1<<20)
	hello := make(chan error, 1)
	go func() {
		line, err := br.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &a.hello)
		}
		hello <- err
	}()
	var herr error
	select {
	case herr = <-hello:
	case <-time.After(helloTimeout):
		herr = fmt.Errorf("no answer within %s", helloTimeout)
	}
	if herr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		msg := lastLine(errTail.String())
		if msg == "" {
			msg = herr.Error()
		}
		return nil, &EngineError{Engine: eng.Name, Problem: "the relay in container " + id + " did not answer: " + msg, Advice: "see " + filepath.Join(dir, "agent.err") + ", or remove the container: " + eng.Name + " rm -f " + id}
	}
	a.stdout = readCloser{br, stdout}
	go func() {
		_ = cmd.Wait()
		a.ended = time.Now()
		close(a.done)
	}()
	return a, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// limitWriter keeps the first max bytes written to it.
type limitWriter struct {
	mu  sync.Mutex
	b   *strings.Builder
	max int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.b.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		w.b.Write(p[:room])
	}
	return len(p), nil
}

// lineWriter writes each message whole, so Ack never splits one.
type lineWriter struct{ a *Agent }

func (w lineWriter) Write(p []byte) (int, error) {
	w.a.wmu.Lock()
	defer w.a.wmu.Unlock()
	return w.a.stdin.Write(p)
}

func (w lineWriter) Close() error { return w.a.stdin.Close() }

// Streams are the relay's stream.
func (a *Agent) Streams() (io.WriteCloser, io.ReadCloser) { return lineWriter{a}, a.stdout }

// Identity is none on this machine: the agent's process is the container's.
func (a *Agent) Identity() (int, string) { return 0, "" }

// AgentPID is the agent's pid inside the container.
func (a *Agent) AgentPID() int { return a.hello.AgentPID }

// CommandLine is the agent's command.
func (a *Agent) CommandLine() []string { return a.args }

// Done is closed when the relay's stream has ended.
func (a *Agent) Done() <-chan struct{} { return a.done }

// ExitedWithin reports whether the stream ended less than d after the launch.
func (a *Agent) ExitedWithin(d time.Duration) bool {
	select {
	case <-a.done:
	case <-time.After(time.Until(a.began.Add(d))):
		return false
	}
	return a.ended.Sub(a.began) < d
}

// ExitDescription says how the stream ended ("" while it lasts).
func (a *Agent) ExitDescription() string {
	select {
	case <-a.done:
	default:
		return ""
	}
	if a.stopped.Load() {
		return "stopped with its container " + a.ID
	}
	if st, err := a.eng.call(context.Background(), callTimeout, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", a.ID); err == nil {
		if f := strings.Fields(st); len(f) == 2 && f[0] != "running" {
			return "exited with status " + f[1] + " (container " + a.ID + " " + f[0] + ")"
		}
	}
	return "lost: the connection to the relay in container " + a.ID + " ended"
}

// Stderr is the tail of what the agent wrote to stderr in the container.
func (a *Agent) Stderr() string {
	b, err := os.ReadFile(filepath.Join(a.dir, "agent.err"))
	if err != nil {
		return a.errTail.String()
	}
	if len(b) > 16<<10 {
		b = b[len(b)-16<<10:]
	}
	return string(b)
}

// Stop stops the container: the agent gets SIGTERM, then SIGKILL after grace.
func (a *Agent) Stop(grace time.Duration) {
	a.stopContainer(grace)
}

// Kill stops the container at once.
func (a *Agent) Kill() { a.stopContainer(0) }

func (a *Agent) stopContainer(grace time.Duration) {
	a.stopped.Store(true)
	_ = a.eng.Stop(context.Background(), a.ID, grace)
	select {
	case <-a.done:
	case <-time.After(2 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// Reattached says whether an earlier kandev had initialized the agent, and
// which prompt of its the answer of is still to be recorded.
func (a *Agent) Reattached() (bool, string) {
	if a.hello.Prompt == 0 {
		return a.hello.Initialized, ""
	}
	return a.hello.Initialized, fmt.Sprint(a.hello.Prompt)
}

// Ack tells the relay the first lines of its stream are recorded.
func (a *Agent) Ack(lines int64) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": acp.RelayAckMethod, "params": map[string]any{"lines": lines}})
	_, _ = lineWriter{a}.Write(append(b, '\n'))
}

// RemoveSessions removes the containers of sessions ids and their relay
// directories (kandev prune): the ids whose container was removed.
func RemoveSessions(ctx context.Context, cfg config.RuntimeConfig, homeDir string, ids []string) ([]string, error) {
	eng, err := FindEngine(cfg.Engine)
	if err != nil {
		return nil, err
	}
	home := HomeHash(homeDir)
	var removed []string
	for _, id := range ids {
		c, err := eng.Find(ctx, home, id)
		if err != nil {
			return removed, err
		}
		if c != nil {
			if err := eng.Remove(ctx, c.ID); err != nil {
				return removed, err
			}
			removed = append(removed, id)
		}
		_ = os.RemoveAll(RelayDir(homeDir, id))
	}
	return removed, nil
}

// Of is session id's container (nil: none), for status and doctor.
func Of(ctx context.Context, cfg config.RuntimeConfig, homeDir, id string) (*Container, error) {
	eng, err := FindEngine(cfg.Engine)
	if err != nil {
		return nil, err
	}
	return eng.Find(ctx, HomeHash(homeDir), id)
}

// All are every container of the home (kandev doctor).
func All(ctx context.Context, cfg config.RuntimeConfig, homeDir string) ([]Container, error) {
	eng, err := FindEngine(cfg.Engine)
	if err != nil {
		return nil, err
	}
	return eng.List(ctx, HomeHash(homeDir), "")
}

// ErrNotRunning says a session's container does not run.
var ErrNotRunning = errors.New("container not running")

// StopSession stops session id's container when it runs (kandev close of
// a session no owner runs); ErrNotRunning when it does not.
func StopSession(ctx context.Context, cfg config.RuntimeConfig, homeDir, id string) error {
	eng, err := FindEngine(cfg.Engine)
	if err != nil {
		return err
	}
	c, err := eng.Find(ctx, HomeHash(homeDir), id)
	if err != nil {
		return err
	}
	if c == nil || !c.Running() {
		return ErrNotRunning
	}
	return eng.Stop(ctx, c.ID, 10*time.Second)
}
