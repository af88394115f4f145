package commands

import (
	"os"
	"time"

	"github.com/kandev/kandev/acp/demoagent"
	"github.com/kandev/kandev/internal/wiretrace"
)

// demoAgentCmd is kandev demo-agent: the built-in ACP agent on stdio.
type demoAgentCmd struct {
	NoResume     bool `help:"Do not advertise or serve session/resume."`
	NoLoad       bool `help:"Do not advertise or serve session/load."`
	FailOnResume bool `help:"Answer resume and load with an unknown-session error."`
	NoFork       bool `help:"Do not advertise or serve session/fork."`
	NoCommands   bool `help:"Advertise no commands (so it has no compact)."`
	Delay        int  `help:"Sleep MS before every update it sends." placeholder:"MS"`
	StartDelay   int  `help:"Sleep MS before answering initialize (a slow-starting agent)." placeholder:"MS"`
	LegacyModels bool `help:"Offer the model as agents did before ACP 1.x: a models list and session/set_model (as Gemini CLI still does), and effort alone."`
	NoClose      bool `help:"Do not advertise or serve session/close."`
	NoDelete     bool `help:"Do not advertise or serve session/delete."`
	NoSteer      bool `help:"Do not advertise or serve steering (_session/steering: a message added to the running turn)."`
	IgnoreEOF    bool `help:"Keep running when stdin closes, until a signal (an agent like Claude's or codex's adapter; set exit_on_eof = false for it)."`
}

// Help shows an example.
func (c *demoAgentCmd) Help() string {
	return "Example (as a custom agent in config.toml):\n  [agents.demo-noresume]\n  command = [\"kandev\", \"demo-agent\", \"--no-resume\"]"
}

// Run serves ACP on stdin/stdout.
func (c *demoAgentCmd) Run(env *Env) error {
	if c.Delay < 0 || c.StartDelay < 0 {
		return usagef("--delay and --start-delay must be 0 or more")
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	role := "demo-agent"
	if c.LegacyModels {
		role = "demo-agent-legacy-models" // speaks the removed models list on purpose
	}
	in, out := wiretrace.Wrap(role, env.Stdin, os.Stdout)
	err = demoagent.Run(env.Ctx, demoagent.Options{
		Dir: h.DemoAgentDir(), NoResume: c.NoResume, NoLoad: c.NoLoad, FailOnResume: c.FailOnResume,
		NoFork: c.NoFork, NoCommands: c.NoCommands, LegacyModels: c.LegacyModels, NoClose: c.NoClose, NoDelete: c.NoDelete, NoSteer: c.NoSteer,
		Delay: time.Duration(c.Delay) * time.Millisecond, StartDelay: time.Duration(c.StartDelay) * time.Millisecond,
	}, in, out)
	if c.IgnoreEOF && err == nil {
		<-env.Ctx.Done() // stdin closed: wait for the signal, as those agents do
	}
	return err
}
