package commands

import (
	"fmt"
	"os"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/editor"
	"github.com/kandev/kandev/internal/wiretrace"
	"github.com/kandev/kandev/state"
)

// acpCmd is kandev acp: kandev as an ACP agent on stdio, for editors.
type acpCmd struct {
	Agent    string `help:"Agent of new sessions (default: the editor's _meta.kandev.agent, else config default_agent, else demo)." placeholder:"A"`
	Holder   string `help:"Attach holder prompts are checked against (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	PageSize int    `name:"list-page-size" hidden:"" default:"50" help:"Sessions per session/list page."`
}

// terminalNotice is what kandev acp says when a person runs it at a terminal.
const terminalNotice = "kandev acp: this is kandev as an ACP agent for editors: it reads JSON-RPC on stdin and answers on stdout. " +
	"Point your editor's agent command at it (see kandev acp --help); Ctrl-D ends it."

// Help shows an example.
func (c *acpCmd) Help() string {
	return "Editors start it as their agent command; it speaks ACP on stdin/stdout and logs to stderr.\n\n" +
		"Example (Zed settings.json):\n  \"agent_servers\": {\"kandev\": {\"command\": \"kandev\", \"args\": [\"acp\", \"--agent\", \"claude\"]}}"
}

// Run serves the editor until it closes stdin.
func (c *acpCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	if c.Agent != "" {
		if _, err := acp.LookupProfile(cfg, c.Agent); err != nil {
			return err
		}
	}
	holder := c.Holder
	if holder == "" {
		holder = state.DefaultHolder()
	}
	if isTerminal(env.Stdin) {
		// Only a person at a terminal is told; editors read any stderr as errors.
		fmt.Fprintln(env.Out.Err, terminalNotice)
	}
	in, out := wiretrace.Wrap("acp", env.Stdin, os.Stdout)
	return editor.Serve(editor.Options{
		Home: h, Config: cfg, Agent: c.Agent, Holder: holder, Ctx: env.Ctx, PageSize: c.PageSize, Log: env.Out.Err,
		Job: func(id string) (owner.Job, error) { return ownerJob(env, id, owner.Job{}) },
	}, in, out)
}
