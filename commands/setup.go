package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// SetupFlags are the agent's setup on start and fork.
type SetupFlags struct {
	Model string   `help:"The agent's model (default: [agents.NAME] model; a fork keeps its parent's)." placeholder:"M"`
	Mode  string   `help:"The agent's session mode, e.g. ask or code (default: [agents.NAME] mode; a fork keeps its parent's)." placeholder:"MODE"`
	Set   []string `help:"A config option of the agent, KEY=VALUE (repeatable), e.g. --set effort=high." placeholder:"KEY=VALUE" sep:"none"`
	MCP   []string `name:"mcp" help:"MCP servers for the agent: a JSON file in the mcpServers shape of .mcp.json (repeatable)." placeholder:"FILE" type:"path" sep:"none"`
}

// flags reads the setup flags (and the --mcp files): a usage error when
// one is malformed or holds a literal secret.
func (f SetupFlags) flags() (setup.Flags, error) {
	opts, err := setup.ParseOptions(f.Set)
	if err != nil {
		return setup.Flags{}, setupUsage(err)
	}
	out := setup.Flags{Change: setup.Change{Model: f.Model, Mode: f.Mode, Options: opts}}
	for _, path := range f.MCP {
		b, err := readMCPFile(path)
		if err != nil {
			return setup.Flags{}, err
		}
		servers, err := setup.ParseMCPFile(path, b)
		if err != nil {
			return setup.Flags{}, setupUsage(err)
		}
		out.MCP = append(out.MCP, servers...)
	}
	return out, nil
}

// readMCPFile reads an --mcp file of at most setup.MaxMCPFileBytes: what
// it holds is recorded with the session, so a larger one is refused
// rather than read.
func readMCPFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--mcp %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, setup.MaxMCPFileBytes+1))
	if err != nil {
		return nil, usagef("--mcp %s: %v", path, errors.Unwrap(err))
	}
	if len(b) > setup.MaxMCPFileBytes {
		return nil, usagef("--mcp %s is over the limit of 1 MiB (%d bytes) for an MCP file: name only the servers this session needs", path, setup.MaxMCPFileBytes)
	}
	return b, nil
}

// initial is the setup a new session of agent starts with: the config's
// defaults with the flags over them.
func (f SetupFlags) initial(cfg *config.Config, agent string) (*state.Setup, []state.MCPServer, error) {
	fl, err := f.flags()
	if err != nil {
		return nil, nil, err
	}
	s, servers, err := setup.Initial(cfg, agent, fl)
	return s, servers, setupUsage(err)
}

// forked is a fork's setup: the parent's, with the flags over it.
func (f SetupFlags) forked(parent *state.Session) (*state.Setup, []state.MCPServer, error) {
	fl, err := f.flags()
	if err != nil {
		return nil, nil, err
	}
	servers := append([]state.MCPServer(nil), parent.MCPConfig...)
	for _, srv := range fl.MCP {
		for i := range servers {
			if servers[i].Name == srv.Name {
				servers = append(servers[:i], servers[i+1:]...)
				break
			}
		}
		servers = append(servers, srv)
	}
	return setup.WithServers(setup.Apply(parent.Setup, fl.Change), servers), servers, nil
}

// setupUsage makes a refused setup a usage error (exit 2).
func setupUsage(err error) error {
	var se *setup.Error
	if errors.As(err, &se) {
		return usagef("%s", se.Msg)
	}
	return err
}

// logInitialSetup logs a new session's setup, before its agent starts.
func logInitialSetup(h *state.Home, s *state.Session) error { return owner.LogNewSetup(h, s) }

// setCmd is kandev set.
type setCmd struct {
	SessionRef
	Model string   `help:"The agent's model." placeholder:"M"`
	Mode  string   `help:"The agent's session mode (e.g. ask, code)." placeholder:"MODE"`
	Set   []string `help:"A config option of the agent, KEY=VALUE (repeatable)." placeholder:"KEY=VALUE" sep:"none"`
	MCP   []string `name:"mcp" help:"Replace the session's MCP servers with those of these files (mcpServers shape; repeatable); they run from the agent's next start." placeholder:"FILE" type:"path" sep:"none"`
	Title string   `help:"Name the session; a title the agent sends no longer replaces it." placeholder:"T"`
}

// Help shows an example.
func (c *setCmd) Help() string {
	return "A live owner applies it to its agent at once (before its next turn); otherwise it is\n" +
		"recorded and applied when the agent next starts. Every restore applies it again.\n" +
		"A value the running agent does not offer is refused (exit 2, naming what it offers)\n" +
		"and not recorded; with no agent running, the next start names such a value in a\n" +
		"warning line, with what the agent offers, and the agent goes on with its own.\n\n" +
		"Example:\n  kandev set --latest --mode code --set effort=high\n  kandev set 20261130-0915 --model demo-large"
}

// Run changes the session's setup.
func (c *setCmd) Run(env *Env) error {
	opts, err := setup.ParseOptions(c.Set)
	if err != nil {
		return setupUsage(err)
	}
	ch := setup.Change{Model: c.Model, Mode: c.Mode, Options: opts}
	title := strings.TrimSpace(c.Title)
	if c.Title != "" && (title == "" || strings.ContainsAny(title, "\n\r")) {
		return usagef("--title %q: give one line of text", c.Title)
	}
	if ch.Empty() && len(c.MCP) == 0 && title == "" {
		return usagef("nothing to set: give --model, --mode, --set KEY=VALUE, --mcp FILE or --title T")
	}
	h, s, err := c.load(env, needOpen)
	if err != nil {
		return err
	}
	if state.IsTerminal(s.State) {
		return owner.NotResumableState(s.ID, s.State)
	}
	if err := env.beforeCommit("kandev set " + s.ID); err != nil {
		return err
	}
	if title != "" {
		if s, err = owner.NameSession(h, s.ID, title); err != nil {
			return err
		}
		env.commit("the title of " + s.ID)
		if ch.Empty() && len(c.MCP) == 0 {
			env.Out.Object(setTitleOutput{SessionID: s.ID, Title: s.Title}, func(w io.Writer) {
				fmt.Fprintf(w, "title   %s\n", printableLine(s.Title))
			})
			return nil
		}
	}
	if len(c.MCP) > 0 {
		fl, err := SetupFlags{MCP: c.MCP}.flags()
		if err != nil {
			return err
		}
		if s, err = owner.SetMCPServers(h, s.ID, fl.MCP); err != nil {
			return err
		}
		env.commit("the MCP servers of " + s.ID)
		if ch.Empty() {
			env.Out.Object(setOutput{SessionID: s.ID, Setup: s.Setup}, func(w io.Writer) {
				fmt.Fprintf(w, "setup   %s\n", printableLine(setup.Describe(s.Setup)))
				fmt.Fprintf(w, "recorded: the agent of %s gets these MCP servers when it next starts\n", s.ID)
			})
			return nil
		}
	}
	res, err := owner.SetSetup(env.Ctx, h, s.ID, ch)
	if err != nil {
		return setupUsage(err)
	}
	env.commit("the change of " + s.ID + "'s setup")
	if res.Applied && len(res.NotOffered) > 0 {
		return usagef("%s", refusedSet(s, res))
	}
	env.Out.Object(setOutput{SessionID: s.ID, Setup: res.Setup, Queued: res.Queued, Applied: res.Applied,
		Steps: &res.Steps, NotOffered: &res.NotOffered}, func(w io.Writer) {
		fmt.Fprintf(w, "setup   %s\n", printableLine(setup.Describe(res.Setup)))
		switch {
		case res.Applied && len(res.Steps) > 0:
			fmt.Fprintf(w, "applied by the live owner of %s: %s\n", s.ID, strings.Join(res.Steps, ", "))
		case res.Applied:
			fmt.Fprintf(w, "the agent of %s already runs with it\n", s.ID)
		case res.Queued:
			fmt.Fprintf(w, "queued for the live owner of %s (busy with a turn): applied before its next turn\n", s.ID)
		default:
			fmt.Fprintf(w, "recorded: applied when the agent of %s next starts\n", s.ID)
		}
	})
	return nil
}

// refusedSet is the one line of a kandev set the running agent refused in
// part or whole: what it does not take (naming what it offers) and what it
// applied; the record keeps only what the agent took.
func refusedSet(s *state.Session, res *owner.SetResult) string {
	done := "nothing was changed"
	if len(res.Steps) > 0 {
		done = "applied " + strings.Join(res.Steps, ", ")
	}
	return printableLine(fmt.Sprintf("the agent of %s does not take %s; %s", s.ID, setup.Named(s.Agent, res.NotOffered), done))
}
