package commands

import (
	"fmt"
	"io"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// ResumeCmd is kandev resume.
type ResumeCmd struct {
	SessionRef
	Holder     string `help:"Attach holder (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	TTL        int    `name:"ttl" help:"Lease TTL in seconds (default [session.attach] default_ttl_seconds, 900; at most 86400)." placeholder:"S"`
	NoContinue bool   `help:"Repair an interrupted turn but do not continue it."`
	I          bool   `short:"i" name:"interactive" help:"Stay and read prompts from stdin until EOF."`
}

// Help shows an example.
func (c *ResumeCmd) Help() string { return "Example:\n  kandev resume --latest" }

// Run relaunches and restores the session's agent.
func (c *ResumeCmd) Run(env *Env) error {
	id, err := c.resolve(env, func(s *state.Session) bool { return !state.IsTerminal(s.State) })
	if err != nil {
		return err
	}
	h, _ := env.Home()
	s, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	if state.IsTerminal(s.State) {
		return fmt.Errorf("%w: session %s is %s; start a follow-up with: kandev start --parent %s", acp.ErrNotResumable, id, s.State, id)
	}
	if alive, _ := h.OwnerAlive(id); alive {
		env.Out.Object(map[string]any{"session": s, "restore": map[string]any{"method": "reattach", "fallback_reason": ""}}, func(w io.Writer) {
			fmt.Fprintf(w, "session %s is running in another kandev process (pid %d): nothing to relaunch; follow it with kandev events %s --follow\n", id, s.OwnerPID, id)
		})
		return nil
	}
	var res *acp.Result
	job := acp.Job{NoContinue: c.NoContinue}
	res, err = runOwnerResult(env, id, job)
	if res != nil && res.Session != nil {
		restore := map[string]any{"method": string(res.Restore), "fallback_reason": res.FallbackReason}
		if env.Out.JSON {
			env.Out.Object(map[string]any{"session": res.Session, "restore": restore}, nil)
		} else if err == nil {
			fmt.Fprintf(env.Out.Out, "session %s restored (%s)", id, res.Restore)
			if res.FallbackReason != "" {
				fmt.Fprintf(env.Out.Out, " after %s", res.FallbackReason)
			}
			fmt.Fprintf(env.Out.Out, "; state %s\n", res.Session.State)
		}
	}
	return err
}
