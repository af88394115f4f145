package commands

import (
	"fmt"
	"io"

	"github.com/kandev/kandev/acp/agentswitch"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// switchCmd is kandev switch.
type switchCmd struct {
	SessionRef
	Agent string   `required:"" help:"The agent to go on with (kandev agents lists them)." placeholder:"NAME"`
	Fork  bool     `help:"Switch a fork of the session (at its end); the session itself stays on its agent."`
	Text  []string `arg:"" optional:"" name:"prompt" help:"A message for the new agent, sent at once as kandev prompt sends it; - reads it from stdin."`
	LeaseFlags
	LingerFlag
}

// Help shows an example.
func (c *switchCmd) Help() string {
	return "The session goes on with another agent: the next turn starts it with the conversation so far\n" +
		"(its resume context) in the same worktree. A live agent kept warm is closed first; a turn\n" +
		"that runs is never cut: wait for it or cancel it. The setup (model, mode, options, MCP\n" +
		"servers) carries over where the new agent offers the same; what it does not is named when\n" +
		"it starts.\n\n" +
		"Example:\n  kandev switch 20261130-0915 --agent codex\n  kandev switch 20261130-0915 --agent gemini --fork \"review the last change\""
}

// Run switches, and sends the prompt when one is given.
func (c *switchCmd) Run(env *Env) error {
	if c.Latest && c.ID != "" { // with --latest, a lone word is the prompt
		c.Text = append([]string{c.ID}, c.Text...)
		c.ID = ""
	}
	h, id, err := c.pick(env, needIdle)
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	if err := c.LeaseFlags.check(env, h, id); err != nil {
		return err
	}
	v, err := agentswitch.Check(h, cfg, id, c.Agent)
	if err != nil {
		return err
	}
	if v == agentswitch.Same { // nothing changes, nothing is logged, nothing is closed
		s, err := h.LoadSession(id)
		if err != nil {
			return err
		}
		out := switchOutput{Session: s, Switch: &agentswitch.Report{SessionID: id, From: s.Agent, To: c.Agent, Setup: s.Setup}}
		env.Out.Object(out, func(w io.Writer) { printSwitch(w, out) })
		if len(c.Text) > 0 {
			env.Out.Warn("the message was not sent (nothing was switched): kandev prompt " + id + " sends it")
		}
		return nil
	}
	from := id
	if c.Fork {
		if id, err = forkToSwitch(env, h, id); err != nil {
			return err
		}
	}
	if err := env.beforeCommit("kandev switch " + id); err != nil {
		return err
	}
	rep, err := agentswitch.Switch(env.Ctx, agentswitch.Request{Home: h, Config: cfg, SessionID: id, To: c.Agent, Warn: env.Out.Warn})
	if err != nil {
		return err
	}
	env.commit("the switch of " + id)
	out := switchOutput{Switch: rep}
	if id != from {
		out.ForkedFrom = from
	}
	out.Session, _ = h.LoadSession(id)
	env.Out.Object(out, func(w io.Writer) { printSwitch(w, out) })
	if len(c.Text) == 0 {
		return nil
	}
	p := &promptCmd{SessionRef: SessionRef{ID: id}, Text: c.Text, Holder: c.Holder, Force: c.Force, LingerFlag: c.LingerFlag}
	return p.Run(env)
}

// printSwitch is kandev switch's text output.
func printSwitch(w io.Writer, out switchOutput) {
	rep := out.Switch
	if out.ForkedFrom != "" {
		fmt.Fprintln(w, rep.SessionID)
		fmt.Fprintf(w, "forked %s at its end; it stays on agent %s\n", out.ForkedFrom, rep.From)
	}
	fmt.Fprintln(w, agentswitch.Describe(rep))
	if !rep.Switched {
		return
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "turn %s was cut off before the switch: %s does not continue it by itself (it sees it in the conversation); a prompt carries on\n", rep.Interrupted, rep.To)
	}
	if rep.Setup != nil {
		fmt.Fprintf(w, "setup carried over: %s (%s applies what it offers when it starts and names what it does not)\n", setup.Describe(rep.Setup), rep.To)
	}
	fmt.Fprintf(w, "next: kandev prompt %s \"...\"\n", rep.SessionID)
}

// forkToSwitch forks session id at its end (its setup copied, the first
// prompt carrying the conversation) and returns the fork's id.
func forkToSwitch(env *Env, h *state.Home, id string) (string, error) {
	parent, err := h.LoadSession(id)
	if err != nil {
		return "", err
	}
	su, servers, err := SetupFlags{}.forked(parent)
	if err != nil {
		return "", err
	}
	spec := surgery.ForkSpec{Parent: id, At: -1, Now: env.Now().UTC(), Place: func(s *state.Session) error {
		s.Setup, s.MCPConfig, s.TrustPending = su, servers, parent.TrustPending
		return nil
	}}
	if err := env.beforeCommit("kandev switch --fork " + id); err != nil {
		return "", err
	}
	child, _, err := surgery.Fork(h, spec)
	if err := asUsage(err); err != nil {
		return "", err
	}
	env.commit("the fork of " + id)
	return child.ID, logInitialSetup(h, child)
}
