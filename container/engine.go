// Package container runs a session's agent in a container of the machine's
// engine (podman, else docker) that outlives the kandev processes talking
// to it: the container's main process is kandev's relay (relay.go), which
// keeps the agent's pipes and a journal of what it wrote, so a later kandev
// finds the container by its labels and reattaches to the same agent
// (docs/containers.md, docs/internals.md). Every call to the engine's CLI
// is bounded in time, and an engine that is missing, stopped or refuses
// gives one EngineError that names it and what to do.
package container

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Labels every kandev container carries.
const (
	LabelSession = "kandev.session"
	LabelHome    = "kandev.home"
)

// ErrEngine marks a container engine that is missing, stopped or refuses.
var ErrEngine = errors.New("container engine unavailable")

// EngineError is the engine's failure as the user acts on it.
type EngineError struct {
	Engine  string // the CLI, as named ("podman")
	Problem string
	Advice  string
}

func (e *EngineError) Error() string {
	msg := "container engine " + e.Engine + ": " + e.Problem
	if e.Advice != "" {
		msg += "; " + e.Advice
	}
	return msg
}

// Is makes errors.Is(err, ErrEngine) true.
func (e *EngineError) Is(target error) bool { return target == ErrEngine }

// Engine is a container engine's CLI. DOCKER_HOST and CONTAINER_HOST in
// kandev's environment reach it unchanged, so the engine may be another
// machine's (ssh://user@host).
type Engine struct {
	Name string // as configured or found: "podman", "docker", a path
	Path string
}

// callTimeout bounds one engine call; run and start get more (an engine
// pulling nothing still sets up a filesystem).
const (
	callTimeout  = 15 * time.Second
	startTimeout = 60 * time.Second
)

// FindEngine is the engine named (a CLI on PATH or a path), else podman,
// else docker.
func FindEngine(named string) (*Engine, error) {
	names := []string{"podman", "docker"}
	if named != "" {
		names = []string{named}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return &Engine{Name: n, Path: p}, nil
		}
	}
	if named != "" {
		return nil, &EngineError{Engine: named, Problem: "not found on PATH", Advice: "install it, or set [runtime] engine to podman or docker"}
	}
	return nil, &EngineError{Engine: "podman or docker", Problem: "neither is on PATH", Advice: "install podman (apt-get install podman runc) or docker, or run the agent without --runtime container"}
}

// HomeHash labels a home's containers: the first 16 hex digits of the
// SHA-256 of its absolute path.
func HomeHash(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:8])
}

// Name is the container name of session id of the home hashed home.
func Name(home, id string) string { return "kandev-" + home + "-" + id }

// call runs the engine with args, bounded by d; its stdout, trimmed.
func (e *Engine) call(ctx context.Context, d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Path, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", &EngineError{Engine: e.Name, Problem: fmt.Sprintf("%s %s did not answer within %s", e.Name, args[0], d), Advice: "check that the engine (or its remote host) is up: " + e.Name + " info"}
	}
	if err != nil {
		return strings.TrimSpace(out.String()), e.refusal(args[0], errb.String(), err)
	}
	return strings.TrimSpace(out.String()), nil
}

// refusal turns the engine's stderr into one line naming what to do.
func (e *Engine) refusal(verb, stderr string, err error) error {
	msg := lastLine(usageHint.ReplaceAllString(stderr, ""))
	if msg == "" {
		msg = err.Error()
	}
	low := strings.ToLower(msg)
	advice := ""
	switch {
	case strings.Contains(strings.ToLower(stderr), "unknown flag: --rootfs"):
		msg = "it has no --rootfs: it runs containers from images only"
		advice = "set [runtime] image to an image holding the agent (docs/containers.md)"
	case strings.Contains(low, "image not known") || strings.Contains(low, "no such image") || strings.Contains(low, "unable to find image") ||
		strings.Contains(low, "pull access denied") || strings.Contains(low, "manifest unknown") || strings.Contains(low, "initializing source"):
		advice = "build or pull the image first (kandev pulls nothing), or set [runtime] rootfs instead of image"
	case strings.Contains(low, "permission denied"):
		advice = "run kandev as a user the engine accepts (docker group, or rootless podman)"
	case strings.Contains(low, "cannot connect") || strings.Contains(low, "unable to connect") || strings.Contains(low, "is the docker daemon running") || strings.Contains(low, "connection refused"):
		advice = "start the engine (systemctl start " + e.Name + "), or check DOCKER_HOST / CONTAINER_HOST"
	}
	return &EngineError{Engine: e.Name, Problem: e.Name + " " + verb + ": " + msg, Advice: advice}
}

// usageHint is what docker adds after an error ("Usage:  docker run ...",
// "See 'docker run --help'.", "Run 'docker run --help' for more information").
var usageHint = regexp.MustCompile(`(?m)^(Usage: .*|(See|Run) '[^']*--help'.*)$`)

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(strings.TrimPrefix(s, "Error: "), "error: ")
}

// Container is one kandev container as the engine reports it.
type Container struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Session string `json:"session"`
	State   string `json:"state"` // running, exited, created, ...
}

// Running says whether its main process (the relay) runs.
func (c *Container) Running() bool { return c.State == "running" }

// List is every container of home (its hash), or of one session of it.
func (e *Engine) List(ctx context.Context, home, session string) ([]Container, error) {
	args := []string{"ps", "-a", "--no-trunc", "--filter", "label=" + LabelHome + "=" + home}
	if session != "" {
		args = append(args, "--filter", "label="+LabelSession+"="+session)
	}
	args = append(args, "--format", "{{.ID}}")
	out, err := e.call(ctx, callTimeout, args...)
	if err != nil || out == "" {
		return nil, err
	}
	ids := strings.Fields(out)
	info, err := e.call(ctx, callTimeout, append([]string{"inspect", "--format", "{{.Id}}\t{{.Name}}\t{{index .Config.Labels \"" + LabelSession + "\"}}\t{{.State.Status}}"}, ids...)...)
	if err != nil {
		return nil, err
	}
	var cs []Container
	for _, l := range strings.Split(info, "\n") {
		f := strings.Split(strings.TrimSpace(l), "\t")
		if len(f) != 4 {
			continue
		}
		cs = append(cs, Container{ID: shortID(f[0]), Name: strings.TrimPrefix(f[1], "/"), Session: f[2], State: f[3]})
	}
	return cs, nil
}

// Find is the container of session id, nil when there is none.
func (e *Engine) Find(ctx context.Context, home, id string) (*Container, error) {
	cs, err := e.List(ctx, home, id)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return &cs[0], nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Start starts a stopped container again.
func (e *Engine) Start(ctx context.Context, id string) error {
	_, err := e.call(ctx, startTimeout, "start", id)
	return err
}

// Stop stops a container, killing its processes after grace.
func (e *Engine) Stop(ctx context.Context, id string, grace time.Duration) error {
	secs := int((grace + time.Second - 1) / time.Second) // the engine counts whole seconds: round up
	_, err := e.call(ctx, callTimeout+grace, "stop", "-t", fmt.Sprint(secs), id)
	return err
}

// Remove removes a container, running or not.
func (e *Engine) Remove(ctx context.Context, id string) error {
	_, err := e.call(ctx, callTimeout, "rm", "-f", id)
	return err
}

// RunSpec is a new container for one session.
type RunSpec struct {
	Home, Session string // the home's hash, the session id
	Image, Rootfs string // one of them; neither: the host's root ("/")
	Network       string
	Cwd           string   // mounted at the same path, the working directory
	Mounts        []string // SRC[:DST[:ro]]
	Exe           string   // this kandev binary, mounted read-only at ExePath
	RelayDir      string   // mounted at RelayPath
	Env           map[string]string
	Command       []string
}

// Paths inside the container.
const (
	ExePath   = "/kandev/bin/kandev"
	RelayPath = "/kandev/relay"
)

// Run creates and starts the container; its id.
func (e *Engine) Run(ctx context.Context, r RunSpec) (string, error) {
	network := r.Network
	if network == "" {
		network = "host"
	}
	args := []string{"run", "-d", "--name", Name(r.Home, r.Session),
		"--label", LabelSession + "=" + r.Session, "--label", LabelHome + "=" + r.Home,
		"--network", network, "--pull", "never",
		"-v", r.Exe + ":" + ExePath + ":ro", "-v", r.RelayDir + ":" + RelayPath}
	if r.Cwd != "" {
		args = append(args, "-v", r.Cwd+":"+r.Cwd, "-w", r.Cwd)
	}
	for _, m := range r.Mounts {
		if !strings.Contains(m, ":") {
			m += ":" + m
		}
		args = append(args, "-v", m)
	}
	for k, v := range r.Env {
		args = append(args, "-e", k+"="+v)
	}
	switch {
	case r.Image != "":
		args = append(args, r.Image)
	default:
		root := r.Rootfs
		if root == "" {
			root = "/"
		}
		opt := ""
		if e.isPodman() {
			opt = ":O" // an overlay: the container writes nothing into it
		}
		args = append(args, "--rootfs", root+opt)
	}
	args = append(args, ExePath, relayCommand, "serve", RelayPath, "--")
	args = append(args, r.Command...)
	out, err := e.call(ctx, startTimeout, args...)
	if err != nil {
		return "", err
	}
	return shortID(lastLine(out)), nil
}

func (e *Engine) isPodman() bool {
	return strings.Contains(strings.ToLower(e.Name), "podman") || strings.Contains(strings.ToLower(e.Path), "podman")
}

// ExecArgs is the command line that runs args inside container id with
// stdin attached.
func (e *Engine) ExecArgs(id string, args ...string) []string {
	return append([]string{e.Path, "exec", "-i", id}, args...)
}
