package commands

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// resumeCmd is kandev resume.
type resumeCmd struct {
	SessionRef
	Holder     string     `help:"Attach holder (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	TTL        ttlSeconds `name:"ttl" help:"Lease TTL in seconds; 0 or negative means the default ([session.attach] default_ttl_seconds, else 900); at most 86400." placeholder:"S"`
	NoContinue bool       `help:"Repair an interrupted turn but do not continue it."`
	I          bool       `short:"i" name:"interactive" help:"Stay and read prompts from stdin until EOF."`
	LingerFlag
	OfflineFlag
}

// Help shows an example.
func (c *resumeCmd) Help() string { return "Example:\n  kandev resume --latest" }

// Run takes the attach lease, then relaunches and restores the session's agent.
func (c *resumeCmd) Run(env *Env) error {
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	if c.I && !isTerminal(env.Stdin) {
		// Whether the agent is warm or must be restored: there is no one to type.
		return usagef("-i needs a terminal on stdin; pipe prompts to kandev prompt instead")
	}
	ttl, err := state.ValidateTTL(int64(c.TTL), cfg.Session.Attach.DefaultTTLSeconds)
	if err != nil {
		return usagef("%v", err)
	}
	h, s, err := c.resumable(env)
	if err != nil {
		return err
	}
	id := s.ID
	holder := c.Holder
	if holder == "" {
		holder = state.DefaultHolder()
	}
	p, err := newProbe(env, holder, c.NoContinue)
	if err != nil {
		return err
	}
	a := p.assess(s, probeFull)
	if owner.Live(h, id) && (c.Linger != "" || c.NoContinue) {
		// The live owner restored the agent and decided its continuation: neither applies now.
		return fmt.Errorf("%w: session %s already runs in another kandev process (pid %d), which restored it: --linger and --no-continue apply only when resume restores the agent (a prompt with --linger changes a warm owner's linger; kandev close %s ends it)", state.ErrOwnerBusy, id, s.OwnerPID, id)
	}
	lease, err := h.Attach(id, holder, ttl, env.Now())
	if err != nil {
		return err
	}
	attach := resumeAttach{SessionID: id, AttachedTo: lease.AttachedTo, AttachedAt: lease.AttachedAt, AttachExpiresAt: lease.AttachExpiresAt}
	if owner.Live(h, id) {
		return c.showJoined(env, s, a, attach, lease)
	}
	job := owner.Job{NoContinue: c.NoContinue, Offline: c.Offline}
	if c.I {
		job.Next = promptReader(env)
	}
	res, err := c.run(env, s, job)
	if res != nil && res.Session != nil {
		if env.Out.JSON {
			restore := resumeRestore{Method: res.Restore, FallbackReason: res.FallbackReason}
			env.Out.Object(resumeOutput{Session: res.Session, Attach: attach, Restore: restore}, nil)
		} else if err == nil && !env.Out.Quiet {
			printRestored(env.Out.Out, res, h, lease)
		}
	}
	return err
}

// resumable is the picked session's record, refused when it is finished
// or brings something this machine has not trusted: before the lease, so a
// refused resume leaves nothing behind.
func (c *resumeCmd) resumable(env *Env) (*state.Home, *state.Session, error) {
	h, id, s, err := c.pickRecord(env, needResumable, c.Holder, c.NoContinue)
	if err != nil {
		return nil, nil, err
	}
	if s == nil { // unreadable when picked: say why
		if s, err = h.LoadSession(id); err != nil {
			return nil, nil, err
		}
	}
	if state.IsTerminal(s.State) {
		return nil, nil, owner.NotResumableState(id, s.State)
	}
	if err := setup.CheckTrust(s); err != nil {
		return nil, nil, err
	}
	return h, s, nil
}

// showJoined answers a resume whose session a live owner already
// restored: nothing to relaunch, so it says what to do next (with -i, it
// attaches to type prompts to the warm agent).
func (c *resumeCmd) showJoined(env *Env, s *state.Session, a verdict.Assessment, attach resumeAttach, lease *state.Lease) error {
	id := s.ID
	// A live owner restored the agent already: nothing to relaunch.
	if wt := a.Worktree; wt != nil && !wt.Valid {
		return &owner.NotResumableError{SessionID: id, Reason: "session " + id + " runs in another kandev process, but " + wt.Problem}
	}
	if c.I {
		// The agent is already warm: type prompts to it, as attach does.
		return (&attachCmd{SessionRef: SessionRef{ID: id}}).Run(env)
	}
	env.Out.Object(resumeOutput{Session: s, Attach: attach, Restore: resumeRestore{Method: acp.RestoreReattach}}, func(w io.Writer) {
		// The assessment's next command: a prompt for a warm agent, a wait for a running turn.
		if s.CurrentTurn == "" && a.Badge != verdict.BadgeWaitingForPermission {
			fmt.Fprintf(w, "session %s: its agent is already running, warm and idle%s (kandev process %d): nothing to relaunch, nothing to continue\n", id, untilText(s), s.OwnerPID)
			fmt.Fprintf(w, "next: %s (or kandev resume -i %s to type prompts here)\n", a.Next, id)
			fmt.Fprintln(w, leaseLine(id, lease))
			return
		}
		fmt.Fprintf(w, "session %s is running in another kandev process (pid %d): nothing to relaunch; next: %s\n", id, s.OwnerPID, a.Next)
	})
	return nil
}

// promptReader reads one prompt per line from the terminal, with a prompt sign.
func promptReader(env *Env) func() (string, bool) {
	r := bufio.NewReader(env.Stdin)
	return func() (string, bool) {
		fmt.Fprint(env.Out.Err, "kandev> ")
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(env.Out.Err)
			return "", false
		}
		return strings.TrimRight(line, "\r\n"), true
	}
}

// run runs the owner here, or detached when the session lingers or defers
// permissions (not with -i: the terminal is this process's).
func (c *resumeCmd) run(env *Env, s *state.Session, job owner.Job) (*owner.Result, error) {
	job, err := ownerJobFor(env, s, job)
	if err != nil {
		return nil, err
	}
	if err := goLive(env, &job, c.LingerFlag, job.Profile.Name, c.I); err != nil {
		return nil, err
	}
	res, err := dialResult(env, job, owner.Request{Follows: owner.FollowsRestore})
	env.Out.Finish()
	return res, err
}

// printRestored says what a resume that restored the agent did: how, what
// it continued, whether the agent stays warm, and what to do next.
func printRestored(w io.Writer, res *owner.Result, h *state.Home, lease *state.Lease) {
	s := res.Session
	how := string(res.Restore)
	if res.FallbackReason != "" {
		how += " after " + res.FallbackReason
	}
	did := "nothing was interrupted, so nothing to continue"
	if res.StopReason != "" {
		did = "it served what was waiting (above), the last turn ended " + res.StopReason
	}
	agent := "its agent has stopped again (no linger)"
	if alive, _ := h.OwnerAlive(s.ID); alive {
		agent = "its agent is warm and idle" + untilText(s)
	}
	fmt.Fprintf(w, "session %s restored (%s): %s; %s\n", s.ID, how, did, agent)
	fmt.Fprintf(w, "next: kandev prompt %s \"...\" (or kandev resume -i %s to type prompts here)\n", s.ID, s.ID)
	fmt.Fprintln(w, leaseLine(s.ID, lease))
}

// leaseLine says what the attach lease resume took means for a person: the
// session is theirs to drive until it expires (it is not about the agent).
func leaseLine(id string, lease *state.Lease) string {
	return fmt.Sprintf("held for you (%s) until %s: a prompt from another holder needs --force (kandev detach %s releases it)",
		lease.AttachedTo, textTime(lease.AttachExpiresAt), id)
}

// warmUntil is " until TIME" for a session whose owner lingers, else "".
func untilText(s *state.Session) string {
	if s.WarmUntil == nil {
		return ""
	}
	return " until " + textTime(*s.WarmUntil)
}
