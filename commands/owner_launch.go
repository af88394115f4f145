package commands

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// What start, prompt, resume, attach (and the editor bridge, compact and
// the mode/model controls) share to launch a session's owner: the job they
// hand to acp, how it talks to this terminal, and whether it runs here or
// detached (--linger).

// LingerFlag is --linger, shared by start, prompt, resume and attach.
type LingerFlag struct {
	Linger string `help:"Keep the agent warm this long after the turn (30s, 10m; plain numbers are seconds), serving later prompts without a restart (default: [agents.NAME] or [session] linger_seconds, else 5m, or 0 when $CI is set)." placeholder:"DURATION"`
}

// OfflineFlag is --offline, shared by start, prompt and resume.
type OfflineFlag struct {
	Offline bool `help:"When the session travels between machines and its remote does not answer, run the turn on this machine's copy without the claim (the log says so; a later conflicting push is refused as diverged)."`
}

// duration is the flag's value, else the config's for agent.
func (l LingerFlag) duration(cfg *config.Config, agent string) (time.Duration, error) {
	if l.Linger == "" {
		return time.Duration(cfg.LingerSeconds(agent)) * time.Second, nil
	}
	d, err := time.ParseDuration(l.Linger)
	if err != nil {
		n, nerr := strconv.Atoi(l.Linger)
		if nerr != nil {
			return 0, usagef("--linger %q: give a duration such as 30s or 10m", l.Linger)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 || d > config.MaxLingerSeconds*time.Second {
		return 0, usagef("--linger %s is outside 0..24h", l.Linger)
	}
	return d, nil
}

// ownerJob fills the parts of an owner job every command shares, for an
// existing session that is not finished.
func ownerJob(env *Env, id string, job owner.Job) (owner.Job, error) {
	h, err := env.Home()
	if err != nil {
		return job, err
	}
	if _, err := env.Config(); err != nil {
		return job, err
	}
	if _, err := env.PermissionMode(); err != nil {
		return job, err
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return job, err
	}
	return ownerJobFor(env, s, job)
}

// ownerJobFor is ownerJob for the record s the command has already read.
func ownerJobFor(env *Env, s *state.Session, job owner.Job) (owner.Job, error) {
	if state.IsTerminal(s.State) {
		return job, owner.NotResumableState(s.ID, s.State)
	}
	if err := setup.CheckTrust(s); err != nil {
		return job, err // nothing a remote brought runs before this machine agrees
	}
	job.Record = s
	return serveJob(env, s.ID, s.Agent, s.Runtime, job)
}

// launchJob fills job for session id with what it needs from this command:
// where the session lives, its agent, runtime and permission mode, and how
// it shows events, asks, warns and notifies on this terminal.
func launchJob(env *Env, h *state.Home, cfg *config.Config, id string, profile acp.Profile, mode, runtime string, job owner.Job) owner.Job {
	job.Home, job.Config, job.SessionID, job.Profile, job.Permissions = h, cfg, id, profile, mode
	inContainer(&job, runtime)
	if job.Emit == nil {
		job.Emit = env.Out.Event
	}
	job.Ask, job.Progress = askOnTerminal(env), progressLine(env)
	if mode == owner.PermAsk {
		job.AskParked = askParkedOnTerminal(env)
		job.AskValue = askValueOnTerminal(env)
		job.AskOption = askOptionOnTerminal(env, job.AskParked)
	}
	job.Abort, job.Warn = env.Abort, env.Out.Warn
	job.Emit = longTurnNotice(env, cfg, id, oneCancelLine(env, job.Emit))
	withNotify(&job, cfg)
	return job
}

// runOwnerResult runs the owner and finishes the stream, leaving the closing object to the caller.
func runOwnerResult(env *Env, id string, job owner.Job) (*owner.Result, error) {
	job, err := ownerJob(env, id, job)
	if err != nil {
		return nil, err
	}
	res, err := dialResult(env, job, owner.Request{Follows: owner.FollowsRestore})
	env.Out.Finish()
	return res, err
}

// dialResult reaches the session's owner (owner.Dial) for a command that
// follows a first turn or a restore, and returns what it ran.
func dialResult(env *Env, job owner.Job, r owner.Request) (*owner.Result, error) {
	d, err := owner.Dial(env.Ctx, job, r)
	if d == nil {
		return nil, err
	}
	return d.Result, err
}

// goLive makes job run in a detached owner when owner.DecideReach says so
// (it lingers or defers permissions: the owner must outlive this command;
// never for an interactive command, whose terminal is its own). An
// explicit --linger also rides on a prompt queued for a live owner, which
// then lingers that long after serving it.
func goLive(env *Env, job *owner.Job, l LingerFlag, agent string, interactive bool) error {
	d, err := l.duration(job.Config, agent)
	if err != nil {
		return err
	}
	job.Linger = d
	if l.Linger != "" {
		job.Queued.Linger = &d
	}
	// Inputs left behind when this command stops owning the session are
	// served by a detached owner that exits once they are.
	job.Serve = serveArgs(env, job, 0)
	// Whether a live owner is joined is seen when the prompt is delivered;
	// here: where the owner runs when none is.
	if owner.DecideReach(owner.ReachFacts{Linger: d, Defers: job.Permissions == owner.PermDefer, Interactive: interactive}) != owner.ReachDetached {
		if interactive && l.Linger == "" {
			// The owner is this command, on the person's terminal: at the
			// end of their input it ends, rather than hold the terminal for
			// the default linger (an explicit --linger still does).
			job.Linger = 0
		}
		return nil
	}
	job.Detach = serveArgs(env, job, d)
	if job.Permissions == owner.PermAsk && job.AskParked != nil {
		// This command asks about what the owner's first turns request.
		job.Detach = append(job.Detach, "--asker", state.ThisAsker().String())
	}
	return nil
}

// serveArgs is the command line of a detached owner for job that lingers linger.
func serveArgs(env *Env, job *owner.Job, linger time.Duration) []string {
	args := []string{"--home", job.Home.Dir, "--permissions", job.Permissions}
	if env.G.Config != "" {
		args = append(args, "--config", env.G.Config)
	}
	args = append(args, "__serve", job.SessionID, "--linger", linger.String())
	// What it would read the record for: the owner reads it once, under its lock.
	args = append(args, "--agent", job.Profile.Name)
	if job.Outlives {
		args = append(args, "--runtime", config.RuntimeContainer)
	}
	if job.NoContinue {
		args = append(args, "--no-continue")
	}
	if job.Offline {
		args = append(args, "--offline")
	}
	return args
}

// progressLine shows start-up steps on a terminal's stderr only.
func progressLine(env *Env) func(string) {
	if env.Out.JSON || env.Out.Quiet || !isTerminal(env.Out.Err) {
		return nil
	}
	return func(msg string) { env.Out.Info("%s ...", msg) }
}

// askParkedOnTerminal asks the person at this command's terminal about a
// request that an owner in another process parked for it (nil without a
// terminal on stdin: the owner then denies, and the command says why).
func askParkedOnTerminal(env *Env) func(context.Context, string, []sdk.PermissionOption) (allow, always, ok bool) {
	if !isTerminal(env.Stdin) {
		return nil
	}
	tty := openTTY()
	if tty == nil {
		return nil
	}
	r := bufio.NewReader(tty)
	return func(ctx context.Context, title string, opts []sdk.PermissionOption) (bool, bool, bool) {
		offersAlways := false
		for _, o := range opts {
			offersAlways = offersAlways || o.Kind == sdk.PermissionOptionKindAllowAlways
		}
		env.Out.mu.Lock()
		env.Out.breakLine()
		env.Out.mu.Unlock()
		choices := "[y/N]"
		if offersAlways {
			choices = "[y/N/always]"
		}
		fmt.Fprintf(tty, "Allow %s? %s ", printableLine(title), choices)
		l, ok := readLine(ctx, r, tty)
		if !ok {
			return false, false, false
		}
		ans := strings.ToLower(strings.TrimSpace(l))
		always := offersAlways && (ans == "a" || ans == "always")
		return ans == "y" || ans == "yes" || always, always, true
	}
}

// readLine reads the line typed at the terminal, or gives up when ctx ends
// (ok false), ending the question's line on the terminal.
func readLine(ctx context.Context, r *bufio.Reader, tty io.Writer) (line string, ok bool) {
	typed := make(chan string, 1)
	go func() {
		l, _ := r.ReadString('\n')
		typed <- l
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(tty)
		return "", false
	case l := <-typed:
		return l, true
	}
}

// askValueOnTerminal asks an agent's question on the terminal (nil
// without one): the line typed is the answer, an empty one declines.
func askValueOnTerminal(env *Env) func(context.Context, string, []string) (string, bool) {
	if !isTerminal(env.Stdin) {
		return nil
	}
	tty := openTTY()
	if tty == nil {
		return nil
	}
	r := bufio.NewReader(tty)
	return func(ctx context.Context, question string, fields []string) (string, bool) {
		env.Out.mu.Lock()
		env.Out.breakLine()
		env.Out.mu.Unlock()
		hint := "an empty line declines"
		if len(fields) > 1 {
			hint = "a JSON object of " + strings.Join(fields, ", ") + "; " + hint
		}
		fmt.Fprintf(tty, "%s (%s) ", printableLine(question), hint)
		l, ok := readLine(ctx, r, tty)
		return strings.TrimSpace(l), ok
	}
}

// askOptionOnTerminal answers the ask-mode requests of an owner in this
// command with the question a command following another owner asks (ask):
// [y/N], or [y/N/always] where the agent offers it, so nobody can tell where
// the owner runs. It returns the id of the option picked ("": deny); nil
// without a terminal to ask on.
func askOptionOnTerminal(env *Env, ask func(context.Context, string, []sdk.PermissionOption) (allow, always, ok bool)) func(sdk.RequestPermissionRequest) string {
	if ask == nil {
		return nil
	}
	return func(req sdk.RequestPermissionRequest) string {
		allow, always, ok := ask(env.Ctx, permissionTitle(req), req.Options)
		if !ok || !allow {
			return ""
		}
		want, first := sdk.PermissionOptionKindAllowOnce, ""
		if always {
			want = sdk.PermissionOptionKindAllowAlways
		}
		for _, o := range req.Options {
			if o.Kind == want {
				return string(o.OptionId)
			}
			if first == "" && (o.Kind == sdk.PermissionOptionKindAllowOnce || o.Kind == sdk.PermissionOptionKindAllowAlways) {
				first = string(o.OptionId)
			}
		}
		return first
	}
}

// askOnTerminal answers permission requests in ask mode from the terminal.
// Without a terminal on stdin nobody can answer: every request is denied,
// and the first denial says how to approve without asking.
func askOnTerminal(env *Env) func(sdk.RequestPermissionRequest) bool {
	var tty io.ReadWriter
	if isTerminal(env.Stdin) {
		tty = openTTY()
	}
	if tty == nil {
		var once sync.Once
		return func(req sdk.RequestPermissionRequest) bool {
			once.Do(func() {
				env.Out.Warn(owner.AskDeniedAdvice(permissionTitle(req)))
			})
			return false
		}
	}
	r := bufio.NewReader(tty)
	return func(req sdk.RequestPermissionRequest) bool {
		env.Out.mu.Lock()
		env.Out.breakLine()
		env.Out.mu.Unlock()
		fmt.Fprintf(tty, "Allow %s? [y/N] ", printableLine(permissionTitle(req)))
		line, _ := r.ReadString('\n')
		ans := strings.ToLower(strings.TrimSpace(line))
		return ans == "y" || ans == "yes"
	}
}

// permissionTitle names what a permission request is for.
func permissionTitle(req sdk.RequestPermissionRequest) string {
	if req.ToolCall.Title != nil {
		return *req.ToolCall.Title
	}
	return string(req.ToolCall.ToolCallId)
}

// inContainer runs the agent of a session whose runtime is "container" in
// its container (docs/containers.md), which outlives the owner.
func inContainer(job *owner.Job, runtime string) {
	if runtime == config.RuntimeContainer {
		job.Launch, job.Outlives = container.Launcher(job.Config.Runtime, job.Home.Dir), true
	}
}
