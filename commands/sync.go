package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
)

// pushCmd is kandev push.
type pushCmd struct {
	SessionRef
	All    bool   `help:"Every session of this home whose repository has the remote."`
	Remote string `help:"Remote name of the session's repository, or a URL or path (default: [sync] remote, else origin)." placeholder:"R"`
}

// Help shows an example.
func (c *pushCmd) Help() string {
	return "Examples:\n  kandev push --latest\n  kandev push 20261130-0915 --remote origin\n  kandev push --all"
}

// Run sends sessions to the remote: their new events and record, as the ref
// refs/kandev/sessions/<id>, fast-forward only.
func (c *pushCmd) Run(env *Env) error {
	e, err := syncEnv(env, c.Remote)
	if err != nil {
		return err
	}
	var ids []string
	if c.All {
		if c.ID != "" || c.Latest {
			return usagef("give a session, --latest or --all, not several")
		}
		all, err := e.Home.ListSessions()
		if err != nil {
			return err
		}
		for _, s := range all {
			ids = append(ids, s.ID)
		}
	} else {
		id, err := c.resolve(env, needAny)
		if err != nil {
			return err
		}
		ids = []string{id}
	}
	if !c.All {
		res, err := remote.Push(env.Ctx, e, ids[0])
		if err != nil {
			return err
		}
		printSync(env, []*remote.Result{res}, nil)
		return nil
	}
	var results []*remote.Result
	var errs []error
	for _, id := range ids {
		res, err := remote.Push(env.Ctx, e, id)
		if errors.Is(err, remote.ErrNoRemote) {
			continue // not in a repository with that remote: nothing to push it to
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, res)
	}
	return printSync(env, results, errs)
}

// pullCmd is kandev pull.
type pullCmd struct {
	ID      string `arg:"" optional:"" help:"Session id (as on the remote)."`
	All     bool   `help:"Every session on the remote."`
	Remote  string `help:"Remote name of this clone, or a URL or path (default: [sync] remote, else origin)." placeholder:"R"`
	DryRun  bool   `help:"Only say what would be pulled; lists the sessions that exist only on the remote."`
	Replace bool   `help:"A diverged session: take the remote's copy, once a local fork keeps this machine's events."`
}

// Help shows an example.
func (c *pullCmd) Help() string {
	return "Examples:\n  kandev pull --all --dry-run\n  kandev pull 20261130-0915\n  kandev pull --all --remote origin"
}

// Run brings sessions from the remote, fast-forward only.
func (c *pullCmd) Run(env *Env) error {
	e, err := syncEnv(env, c.Remote)
	if err != nil {
		return err
	}
	switch {
	case c.All && c.ID != "":
		return usagef("give a session id or --all, not both")
	case c.All:
		results, errs, err := remote.PullAll(env.Ctx, e, c.DryRun)
		if err != nil {
			return err
		}
		return printSync(env, results, errs)
	case c.ID == "":
		return usagef("name a session (kandev pull --all --dry-run lists the remote's), or --all")
	}
	if err := state.ValidateID(c.ID); err != nil {
		return err
	}
	id := c.ID
	if h, err := env.Home(); err == nil {
		if full, err := h.ResolveID(c.ID); err == nil {
			id = full
		}
	}
	res, err := remote.Pull(env.Ctx, e, id, c.DryRun, c.Replace)
	if err != nil {
		return err
	}
	printSync(env, []*remote.Result{res}, nil)
	return nil
}

func syncEnv(env *Env, flag string) (remote.Env, error) {
	h, err := env.Home()
	if err != nil {
		return remote.Env{}, err
	}
	cfg, err := env.Config()
	if err != nil {
		return remote.Env{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return remote.Env{}, err
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	return remote.Env{Home: h, Config: cfg, Opt: remote.Options{Remote: flag, Dir: dir, Now: now}}, nil
}

// printSync prints what push or pull did to each session. With --all,
// the sessions that failed are listed in the same answer (errors) and the
// command exits 1 after saying how many.
func printSync(env *Env, results []*remote.Result, errs []error) error {
	if results == nil {
		results = []*remote.Result{}
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	out := syncOutput{Sessions: results, Errors: msgs}
	env.Out.Object(out, func(w io.Writer) {
		if len(results) == 0 && len(msgs) == 0 {
			fmt.Fprintln(w, "no session to push or pull (a session travels through the remote of the git repository it runs in; --remote names another)")
		}
		for _, r := range results {
			line := fmt.Sprintf("%s %s", r.ID, r.Action)
			switch r.Action {
			case "pushed", "pulled", "would pull", "new":
				line += fmt.Sprintf(" (%d events)", r.Events)
			case "ahead":
				line += ": this machine has newer events (kandev push " + r.ID + ")"
			case "behind":
				line += ": the remote has newer events (kandev pull " + r.ID + ")"
			}
			if r.RemoteOnly {
				line += " [remote only]"
			}
			if r.Worktree != "" {
				line += "; worktree " + r.Worktree
			}
			fmt.Fprintln(w, line+" "+r.Remote)
		}
		for _, r := range results {
			if r.PulledCwd != "" {
				fmt.Fprintf(w, "%s is paused: its working directory %s came from the remote and lies outside any clone it maps to here, so no agent runs there (pull it from inside your clone, or kandev start --parent %s --cwd DIR)\n", r.ID, printableLine(r.PulledCwd), r.ID)
			}
			if r.TrustPending {
				fmt.Fprintf(w, "%s waits for trust: its MCP servers %s came from the remote and do not run here until you agree (kandev trust %s shows them and asks)\n", r.ID, printableLine(strings.Join(r.Servers, ", ")), r.ID)
			}
		}
	})
	if len(msgs) > 0 {
		for _, m := range msgs {
			env.Out.Warn(m)
		}
		return reportedf("%d session(s) failed (see above)", len(msgs))
	}
	return nil
}
