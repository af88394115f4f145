package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// LingerFlag is --linger, shared by start, prompt and resume.
type LingerFlag struct {
	Linger string `help:"Keep the agent warm this long after the turn (30s, 10m; plain numbers are seconds), serving later prompts without a restart (default: [agents.NAME] or [session] linger_seconds, else 0)." placeholder:"DURATION"`
}

// duration is the flag's value, else the config's for agent.
func (l LingerFlag) duration(cfg *state.Config, agent string) (time.Duration, error) {
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
	if d < 0 || d > state.MaxLingerSeconds*time.Second {
		return 0, usagef("--linger %s is outside 0..24h", l.Linger)
	}
	return d, nil
}

// goLive makes job run in a detached owner when it lingers or defers
// permissions: the owner must outlive this command.
func goLive(env *Env, job *acp.Job, l LingerFlag, agent string) error {
	d, err := l.duration(job.Config, agent)
	if err != nil {
		return err
	}
	job.Linger = d
	if d <= 0 && job.Permissions != acp.PermDefer {
		return nil
	}
	job.Detach = serveArgs(env, job)
	return nil
}

// serveArgs is the command line of a detached owner for job.
func serveArgs(env *Env, job *acp.Job) []string {
	args := []string{"--home", job.Home.Dir, "--permissions", job.Permissions}
	if env.G.Config != "" {
		args = append(args, "--config", env.G.Config)
	}
	args = append(args, "__serve", job.SessionID, "--linger", job.Linger.String())
	if job.NoContinue {
		args = append(args, "--no-continue")
	}
	return args
}

// ServeCmd is the detached owner that start, prompt and resume launch
// when a session lingers or defers permissions. Its output goes to the
// session's owner.out; users never run it.
type ServeCmd struct {
	ID         string        `arg:""`
	Linger     time.Duration `default:"0s"`
	NoContinue bool
}

// Run owns the session until it has nothing to serve and its linger ran out.
func (c *ServeCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	job := acp.Job{Linger: c.Linger, NoContinue: c.NoContinue, Emit: func(state.Event) {}, Detached: true}
	handoff := h.PromptHandoffPath(c.ID)
	if prompt, ok, err := h.ReadPromptHandoff(c.ID); err != nil {
		return err
	} else if ok {
		job.InitialPrompt = prompt
	}
	job, err = ownerJob(env, c.ID, job)
	if err != nil {
		return err
	}
	job.Ask, job.Progress, job.Warn = nil, nil, func(msg string) { fmt.Fprintln(os.Stderr, "kandev:", msg) }
	_, err = acp.RunOwner(env.Ctx, job)
	if !errors.Is(err, state.ErrOwnerBusy) {
		os.Remove(handoff)
	}
	return err
}

// CloseCmd is kandev close.
type CloseCmd struct {
	ID  string `arg:"" help:"Session id or unique prefix."`
	Now bool   `help:"Cancel a running turn instead of letting it finish."`
}

// Help shows an example.
func (c *CloseCmd) Help() string { return "Example:\n  kandev close 20261130-0915 --now" }

// Run ends the session's live owner and waits until it has exited.
func (c *CloseCmd) Run(env *Env) error {
	h, id, err := env.sessionID(c.ID)
	if err != nil {
		return err
	}
	closed := false
	if alive, _ := h.OwnerAlive(id); alive {
		if err := h.Enqueue(id, &state.Input{Kind: state.InputClose, Now: c.Now}); err != nil {
			return err
		}
		if err := waitOwnerGone(env, h, id); err != nil {
			return err
		}
		closed = true
	}
	unscheduled, err := cancelLimitSchedule(h, id)
	if err != nil {
		env.Out.Warn(err.Error())
	}
	env.Out.Object(map[string]any{"session_id": id, "closed": closed, "unscheduled": unscheduled}, func(w io.Writer) {
		if unscheduled {
			fmt.Fprintf(w, "cancelled the kandev recover scheduled for the usage limit's reset\n")
		}
		if !closed {
			fmt.Fprintf(w, "nothing to close: no kandev process is running session %s\n", id)
			return
		}
		fmt.Fprintf(w, "session %s closed; its agent is stopped and the next prompt restores it\n", id)
	})
	return nil
}

// waitOwnerGone waits for the owner lock of id to be released.
func waitOwnerGone(env *Env, h *state.Home, id string) error {
	for {
		if alive, _ := h.OwnerAlive(id); !alive {
			return nil
		}
		select {
		case <-env.Ctx.Done():
			return fmt.Errorf("%w: stopped waiting; session %s still closes", acp.ErrInterrupted, id)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ApproveCmd is kandev approve.
type ApproveCmd struct {
	ID     string `arg:"" help:"Session id or unique prefix."`
	Always bool   `help:"Pick the agent's \"always allow\" option when it offers one."`
}

// Help shows an example.
func (c *ApproveCmd) Help() string { return "Example:\n  kandev approve 20261130-0915" }

// Run answers the pending deferred permission request with allow.
func (c *ApproveCmd) Run(env *Env) error {
	return answer(env, c.ID, &state.Input{Kind: state.InputApprove, Always: c.Always})
}

// DenyCmd is kandev deny.
type DenyCmd struct {
	ID string `arg:"" help:"Session id or unique prefix."`
}

// Help shows an example.
func (c *DenyCmd) Help() string { return "Example:\n  kandev deny 20261130-0915" }

// Run answers the pending deferred permission request with reject.
func (c *DenyCmd) Run(env *Env) error {
	return answer(env, c.ID, &state.Input{Kind: state.InputDeny})
}

// answer queues an approve or deny for the owner that holds a parked request.
func answer(env *Env, ref string, in *state.Input) error {
	h, id, err := env.sessionID(ref)
	if err != nil {
		return err
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	if alive, _ := h.OwnerAlive(id); !alive || !s.PermissionPending {
		return fmt.Errorf("%w: session %s has no permission request waiting (see kandev status %s)", state.ErrNotFound, id, id)
	}
	if err := h.Enqueue(id, in); err != nil {
		return err
	}
	env.Out.Object(map[string]any{"session_id": id, "answer": in.Kind, "always": in.Always}, func(w io.Writer) {
		fmt.Fprintf(w, "%s sent: the turn of %s continues in its owner (follow it with kandev attach %s)\n", in.Kind, id, id)
	})
	return nil
}
