package commands

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// cancelCmd is kandev cancel.
type cancelCmd struct {
	SessionRef
	Child string `help:"Cancel only this subagent of the session (its id, from kandev status), where the agent offers it; the turn goes on." placeholder:"CHILD"`
}

// Help shows an example.
func (c *cancelCmd) Help() string {
	return "Example:\n  kandev cancel 20261130-0915\n  kandev cancel 20261130-0915 --child sub-3f2a"
}

// Run asks the session's owner, in whatever process it runs, to cancel the running turn.
func (c *cancelCmd) Run(env *Env) error {
	if c.Child != "" {
		h, id, err := c.pick(env, needAny)
		if err != nil {
			return err
		}
		return cancelChild(env, h, id, c.Child) // children.go
	}
	h, id, err := c.pick(env, needTurn)
	if err != nil {
		return err
	}
	return control(env, h, id, state.InputCancel)
}

// stopCmd is kandev stop.
type stopCmd struct {
	SessionRef
}

// Help shows an example.
func (c *stopCmd) Help() string { return "Example:\n  kandev stop 20261130-0915" }

// Run stops the session explicitly: the running turn is cancelled with
// stop_reason user_canceled and never continued automatically.
func (c *stopCmd) Run(env *Env) error {
	h, id, err := c.pick(env, needOpen)
	if err != nil {
		return err
	}
	return control(env, h, id, state.InputStop)
}

// control delivers a cancel or stop through the inbox to a live owner; with
// no owner a stop is recorded directly (repairing an interrupted turn as
// user_canceled) and a cancel has nothing to do.
func control(env *Env, h *state.Home, id, kind string) error {
	d, err := owner.Dial(env.Ctx, owner.Job{Home: h, SessionID: id}, owner.Request{Follows: owner.FollowsControl, Control: &state.Input{Kind: kind}, IfTurn: kind == state.InputCancel})
	if err != nil {
		return err
	}
	if s := d.Record; d.Live {
		if !d.Queued {
			env.Out.Object(controlOutput{SessionID: id, Requested: kind, DeliveredTo: ptr("")}, func(w io.Writer) {
				fmt.Fprintf(w, "nothing to cancel: session %s runs no turn; its agent is warm and idle%s\n", id, untilText(s))
			})
			return nil
		}
		env.Out.Object(controlOutput{SessionID: id, Requested: kind, DeliveredTo: ptr("owner")}, func(w io.Writer) {
			if s.CurrentTurn == "" { // a stop of an idle warm owner: only the mark
				fmt.Fprintf(w, "session %s stopped: no turn was running, so none was ended; it will not be continued automatically (a prompt restarts it); its agent stays warm%s (kandev close %s ends it now)\n", id, untilText(s), id)
				return
			}
			fmt.Fprintf(w, "%s requested: the kandev process that runs session %s (pid %d) ends turn %s now", kind, id, s.OwnerPID, s.CurrentTurn)
			if kind == state.InputStop {
				fmt.Fprint(w, "; it will not be continued automatically (a prompt restarts the session)")
			}
			fmt.Fprintln(w)
		})
		return nil
	}
	if kind == state.InputCancel {
		env.Out.Object(controlOutput{SessionID: id, Requested: kind, DeliveredTo: ptr("")}, func(w io.Writer) {
			fmt.Fprintf(w, "nothing to cancel: no kandev process is running session %s\n", id)
		})
		return nil
	}
	// An agent that outlived its owner in a container ends with the stop:
	// a prompt restarts and restores it (docs/containers.md).
	stoppedContainers(env, h, []string{id})
	rep, err := surgery.Repair(h, id, eventlog.StopUserCanceled, false)
	if errors.Is(err, state.ErrOwnerBusy) {
		return control(env, h, id, kind) // an owner appeared meanwhile
	}
	if err != nil {
		return err
	}
	env.Out.Object(controlOutput{SessionID: id, Requested: kind, Repair: rep}, func(w io.Writer) {
		fmt.Fprintf(w, "session %s stopped; it will not be continued automatically (a prompt restarts it)\n", id)
	})
	return nil
}

// detachCmd is kandev detach.
type detachCmd struct {
	SessionRef
	Holder string `help:"Holder whose lease to release (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
}

// Help shows an example.
func (c *detachCmd) Help() string {
	return "Example:\n  kandev detach 20261130-0915 --holder editor:vscode"
}

// Run releases the holder's lease.
func (c *detachCmd) Run(env *Env) error {
	h, id, err := c.pickAs(env, needLease, c.Holder, false)
	if err != nil {
		return err
	}
	holder := c.Holder
	if holder == "" {
		holder = state.DefaultHolder()
	}
	if err := h.Detach(id, holder, env.Now()); err != nil {
		return err
	}
	env.Out.Object(detachOutput{SessionID: id, Detached: holder}, func(w io.Writer) {
		fmt.Fprintf(w, "%s detached from %s\n", holder, id)
	})
	return nil
}

// repairCmd is kandev repair.
type repairCmd struct {
	SessionRef
	DryRun bool `help:"Say what would be repaired; change nothing."`
}

// Help shows an example.
func (c *repairCmd) Help() string { return "Example:\n  kandev repair 20261130-0915 --dry-run" }

// Run reconciles the session after a crash without relaunching its agent.
func (c *repairCmd) Run(env *Env) error {
	h, id, err := c.pick(env, needOpen)
	if err != nil {
		return err
	}
	rep, err := surgery.Repair(h, id, eventlog.StopShutdown, c.DryRun)
	if errors.Is(err, state.ErrOwnerBusy) {
		return fmt.Errorf("%w: session %s is running in another kandev process; nothing to repair while it lives", state.ErrOwnerBusy, id)
	}
	if err != nil {
		return err
	}
	env.Out.Object(repairOutput{Repair: rep}, func(w io.Writer) {
		verb := "repaired"
		if rep.DryRun {
			verb = "would repair"
		}
		switch {
		case rep.TornBytes == 0 && rep.Turn == "":
			fmt.Fprintf(w, "session %s: nothing to repair\n", id)
			return
		case rep.TornBytes > 0:
			fmt.Fprintf(w, "%s: torn last log line (%d bytes) truncated\n", verb, rep.TornBytes)
		}
		if rep.Turn != "" {
			fmt.Fprintf(w, "%s: interrupted turn %s closed (stop_reason shutdown); tool calls with unknown outcome: %d", verb, rep.Turn, len(rep.UnknownCalls))
			if n := len(rep.UnknownChildren); n > 0 {
				fmt.Fprintf(w, "; subagents with unknown outcome: %d", n)
			}
			fmt.Fprintln(w)
		}
	})
	return nil
}

// recoverOne runs one session's owner for recover: nobody follows what it
// runs (unattended), and a session stopped by a usage limit whose reset has
// passed is continued after it (afterLimit).
func recoverOne(env *Env, id string, afterLimit bool) (recoverOutcome, error) {
	job := owner.Job{AfterLimit: afterLimit, Unattended: true}
	if env.Out.JSON {
		job.Emit = func(eventlog.Event) {} // one JSON object for the whole command
	}
	res, err := runOwnerResult(env, id, job)
	o := recoverOutcome{ID: id, Outcome: "continued"}
	switch {
	case errors.Is(err, acp.ErrRateLimited):
		o.Outcome = "waits for the usage limit" // the error line says until when
	case err != nil:
		o.Outcome, o.Error = "failed", err.Error()
	case res != nil && res.Session != nil && res.Session.Pause != nil:
		o.Outcome = "paused"
	}
	return o, err
}

// recoverCmd is kandev recover.
type recoverCmd struct {
	ID        string `arg:"" optional:"" help:"Only this session (id or unique prefix)."`
	All       bool   `help:"Every workspace (default: the current directory's workspace)."`
	Workspace string `help:"Only this workspace." placeholder:"W"`
}

// Help shows an example.
func (c *recoverCmd) Help() string {
	return "Example (after a reboot, or in CI):\n  kandev recover --all"
}

// Run continues every eligible interrupted session, one after another.
func (c *recoverCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	only := ""
	if c.ID != "" {
		if _, only, err = (SessionRef{ID: c.ID}).pick(env, needAny); err != nil {
			return err
		}
	}
	// The same workspaces as --latest: by default the git top level of the
	// current directory (a same-named clone elsewhere is another one); a
	// session named by its id is found in any.
	scope, err := SessionRef{Workspace: c.Workspace, AllWorkspaces: (c.All || only != "") && c.Workspace == ""}.scope()
	if err != nil {
		return err
	}
	all, err := h.ListSessions()
	if err != nil {
		return err
	}
	p, err := newProbe(env, "", false)
	if err != nil {
		return err
	}
	results := []recoverOutcome{}
	var firstErr error
	for _, s := range all {
		if env.Ctx.Err() != nil {
			// Interrupted or terminated: the sessions not reached yet stay as they are.
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: recover stopped before session %s", context.Cause(env.Ctx), s.ID)
			}
			break
		}
		if !scope.contains(s) || only != "" && s.ID != only {
			continue
		}
		a := p.assess(s, probeFull)
		afterLimit := limitDue(s, a, env.Now())
		o, waits := limitWaits(s, env.Now())
		if !waits && !afterLimit && (!a.Interrupted || !a.IsResumable || a.Pause() != nil || a.Reason == verdict.ReasonAgentRunning) {
			continue // nothing to continue, an owner runs it, or paused: an operator decides
		}
		if waits { // an interrupted turn or a queued input, held back
			results = append(results, o) // held back before the agent's limit, which has not reset yet
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: session %s %s", acp.ErrRateLimited, s.ID, o.Error)
			}
			continue
		}
		if err := setup.CheckTrust(s); err != nil {
			// Named, not run: what a pull brought runs only once this machine agrees.
			results = append(results, recoverOutcome{ID: s.ID, Outcome: "waits for trust", Error: "(kandev trust " + s.ID + ")"})
			continue
		}
		o, err := recoverOne(env, s.ID, afterLimit)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		results = append(results, o)
	}
	env.Out.Object(recoverOutput{Recovered: results}, func(w io.Writer) {
		if len(results) == 0 {
			fmt.Fprintln(w, "no interrupted sessions to recover")
		}
		for _, r := range results {
			fmt.Fprintf(w, "%s: %s %s\n", r.ID, r.Outcome, r.Error)
		}
	})
	return firstErr
}
