package commands

import (
	"fmt"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/state"
)

// compactCmd is kandev compact.
type compactCmd struct {
	SessionRef
	LeaseFlags
}

// Help shows an example.
func (c *compactCmd) Help() string {
	return "Sends the agent's own compaction command (it must have advertised one, e.g. compact) as a\n" +
		"maintenance turn. Right after a rewind or a clear the agent's session is a fresh one with\n" +
		"nothing to compact yet (exit 5): send a prompt first.\n\n" +
		"Example:\n  kandev compact 20261130-0915"
}

// Run runs the maintenance turn as the session's owner.
func (c *compactCmd) Run(env *Env) error {
	h, id, err := c.pick(env, needIdle)
	if err != nil {
		return err
	}
	s, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	if state.IsTerminal(s.State) {
		return owner.NotResumableState(id, s.State)
	}
	if err := c.LeaseFlags.check(env, h, id); err != nil {
		return err
	}
	if why := surgery.NothingToCompact(s); why != "" {
		return &owner.NotResumableError{SessionID: id, Reason: "session " + id + " has nothing to compact yet: " + why,
			Advice: "send a prompt first (kandev prompt " + id + ` "..."), then compact`}
	}
	if err := closeIdleWarm(env, h, id); err != nil {
		return err
	}
	if owner.Live(h, id) {
		return fmt.Errorf("%w: session %s is running a turn in another kandev process; compact it when the turn has ended", state.ErrOwnerBusy, id)
	}
	advertised := surgery.AdvertisedCommands(h.LogPath(id))
	name := surgery.CompactionCommand(advertised)
	if name == "" {
		has := "no commands"
		if len(advertised) > 0 {
			has = "only " + strings.Join(advertised, ", ")
		}
		return &owner.NotResumableError{SessionID: id, Reason: fmt.Sprintf("agent %s has no compaction command (it advertised %s)", s.Agent, has),
			Advice: "nothing to do; kandev clear " + id + " starts the agent over instead"}
	}
	res, err := runOwnerResult(env, id, owner.Job{Maintenance: "/" + name})
	if res != nil && res.Session != nil && env.Out.JSON {
		env.Out.Object(res.Session, nil)
	}
	return err
}
