package owner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/demoagent"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// rig runs owners in this process against the demo agent over pipes, with
// a real home in a temporary directory.
type rig struct {
	t    testing.TB
	home *state.Home
	cfg  *config.Config
	opts demoagent.Options // for the next agent launched
	// rewrite, when set, changes each line the agent sends before the
	// owner reads it (to make the agent advertise what it does not serve).
	rewrite func([]byte) []byte

	mu     sync.Mutex
	agents []*pipeAgent
}

func newRig(t testing.TB) *rig {
	t.Helper()
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	cfg.Agent.CancelGraceSeconds = 5
	return &rig{t: t, home: h, cfg: cfg, opts: demoagent.Options{Dir: filepath.Join(t.TempDir(), "demo")}}
}

// create writes a new session record as kandev start does.
func (r *rig) create(prompt string) string {
	r.t.Helper()
	now := time.Now().UTC()
	s := &state.Session{ID: state.NewID(now), Cwd: r.t.TempDir(), Agent: acp.DemoProfile, State: state.StateCreated,
		CreatedAt: now, LastActivityAt: now, Title: "test", InitialPrompt: prompt}
	s.TaskID = s.ID
	if err := r.home.CreateSession(s); err != nil {
		r.t.Fatal(err)
	}
	return s.ID
}

// job is a job for session id with the demo agent launched by the rig.
func (r *rig) job(id, prompt string) Job {
	return Job{Home: r.home, Config: r.cfg, SessionID: id, Prompt: prompt, Permissions: PermApproveAll,
		Profile: acp.Profile{Name: acp.DemoProfile, Command: []string{"demo-agent"}, NativeResume: true}, Launch: r.launch}
}

// run runs an owner to its end.
func (r *rig) run(ctx context.Context, job Job) (*Result, error) {
	r.t.Helper()
	return run(ctx, job)
}

// mustRun runs an owner that must succeed.
func (r *rig) mustRun(job Job) *Result {
	r.t.Helper()
	res, err := run(context.Background(), job)
	if err != nil {
		r.t.Fatalf("owner: %v", err)
	}
	return res
}

func (r *rig) session(id string) *state.Session {
	r.t.Helper()
	s, err := r.home.LoadSession(id)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

func (r *rig) events(id string) []eventlog.Event {
	r.t.Helper()
	evs, _, err := eventlog.ReadAll(r.home.LogPath(id))
	if err != nil {
		r.t.Fatal(err)
	}
	return evs
}

// prompts are the texts of every session/prompt the owners sent.
func (r *rig) prompts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.agents {
		for _, line := range a.sentLines() {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Prompt []struct {
						Text string `json:"text"`
					} `json:"prompt"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "session/prompt" && len(m.Params.Prompt) > 0 {
				out = append(out, m.Params.Prompt[0].Text)
			}
		}
	}
	return out
}

// launch is the rig's Launcher: the demo agent on pipes.
func (r *rig) launch(spec acp.LaunchSpec) (acp.Transport, error) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &pipeAgent{args: spec.Command, cancel: cancel, done: make(chan struct{}), began: time.Now()}
	var agentIn io.Reader
	agentIn, a.in = io.Pipe()
	outR, outW := io.Pipe()
	a.out, a.outW = io.Pipe()
	a.inR = agentIn.(*io.PipeReader)
	rewrite := r.rewrite
	filtered := make(chan struct{})
	go func() {
		defer close(filtered)
		_ = eventlog.Lines(outR, func(line []byte) bool {
			if rewrite != nil {
				line = rewrite(line)
			}
			if _, werr := a.outW.Write(append(line, '\n')); werr != nil {
				_ = outR.CloseWithError(werr)
			}
			return true
		})
		_ = a.outW.Close()
	}()
	go func() {
		_ = demoagent.Run(ctx, r.opts, agentIn, outW)
		_ = outW.Close()
		_ = a.inR.CloseWithError(errors.New("agent gone"))
		<-filtered
		a.mu.Lock()
		a.ended = time.Now()
		a.mu.Unlock()
		close(a.done)
	}()
	r.mu.Lock()
	r.agents = append(r.agents, a)
	r.mu.Unlock()
	return a, nil
}

// pipeAgent is a Transport for the in-process demo agent.
type pipeAgent struct {
	args   []string
	cancel context.CancelFunc
	in     *io.PipeWriter // the owner writes the agent's input here
	inR    *io.PipeReader
	out    *io.PipeReader // and reads its output here
	outW   *io.PipeWriter
	done   chan struct{}
	began  time.Time

	mu    sync.Mutex
	ended time.Time
	sent  bytes.Buffer // everything the owner wrote to the agent
}

func (a *pipeAgent) Streams() (io.WriteCloser, io.ReadCloser) { return tapWriter{a}, a.out }
func (a *pipeAgent) Identity() (int, string)                  { return 0, "" }
func (a *pipeAgent) CommandLine() []string                    { return a.args }
func (a *pipeAgent) Done() <-chan struct{}                    { return a.done }
func (a *pipeAgent) Stderr() string                           { return "" }

func (a *pipeAgent) ExitedWithin(d time.Duration) bool {
	select {
	case <-a.done:
	case <-time.After(time.Until(a.began.Add(d))):
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ended.Sub(a.began) < d
}

func (a *pipeAgent) ExitDescription() string {
	select {
	case <-a.done:
		return "exited with status 0"
	default:
		return ""
	}
}

// Stop closes the agent's input (it ends on EOF), then kills it after grace.
func (a *pipeAgent) Stop(grace time.Duration) {
	_ = a.in.Close()
	select {
	case <-a.done:
	case <-time.After(grace):
		a.Kill()
	}
}

// Kill ends the agent at once: its context ends and its streams break.
func (a *pipeAgent) Kill() {
	a.cancel()
	_ = a.inR.CloseWithError(errors.New("killed"))
	<-a.done
}

func (a *pipeAgent) sentLines() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return bytes.Split(bytes.Clone(a.sent.Bytes()), []byte("\n"))
}

// tapWriter writes to the agent and keeps a copy.
type tapWriter struct{ a *pipeAgent }

func (w tapWriter) Write(p []byte) (int, error) {
	w.a.mu.Lock()
	w.a.sent.Write(p)
	w.a.mu.Unlock()
	return w.a.in.Write(p)
}

func (w tapWriter) Close() error { return w.a.in.Close() }
