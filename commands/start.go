package commands

import (
	"fmt"
	"strings"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// startCmd is kandev start.
type startCmd struct {
	Agent     string       `help:"Agent profile (default: config default_agent, else demo)." placeholder:"A"`
	Cwd       string       `help:"Working directory of the agent (default: current)." placeholder:"D"`
	Workspace string       `help:"Workspace name (default: basename of the git top level of --cwd)." placeholder:"W"`
	Title     string       `help:"Session title (default: the start of the prompt, until the agent names the session)." placeholder:"T"`
	Parent    string       `help:"Continue from a finished session: the first prompt carries its history." placeholder:"ID"`
	Worktree  worktreeFlag `help:"Work in a new linked git worktree next to the repository (--worktree=BRANCH names its branch)."`
	Prompt    []string     `arg:"" optional:"" help:"The task; - reads it from stdin. Without it the agent boots and the session waits."`
	Runtime   string       `help:"Where the agent runs: process (default) or container (docs/containers.md; default: the agent's runtime in the config)." placeholder:"R" enum:",process,container" default:""`
	Key       string       `help:"Idempotency key: at most one session is started per KEY in this home; a retry follows or prints its first turn again." placeholder:"KEY"`
	LingerFlag
	OfflineFlag
	SetupFlags // setup.go: --model, --mode, --set, --mcp
}

// Help shows an example.
func (c *startCmd) Help() string {
	return "Example:\n  kandev start --agent demo \"remember PINEAPPLE\"\n  kandev start --worktree \"fix the flaky test\"   # its own worktree, branch kandev/<id>"
}

// Run creates the session and runs its first turn as its owner.
func (c *startCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	mode, err := env.PermissionMode()
	if err != nil {
		return err
	}
	prompt, err := readPrompt(c.Prompt, env.Stdin)
	if err != nil {
		return err
	}
	agent := c.agent(env, cfg)
	profile, err := acp.LookupProfile(cfg, agent)
	if err != nil {
		return err
	}
	cwd, err := absDir(c.Cwd)
	if err != nil {
		return err
	}
	s, existing, err := c.newSession(env, h, cfg, cwd, agent, prompt)
	if err != nil {
		return err
	}
	// The id is the first line of text output, once the agent has started
	// (id=$(kandev start ... | head -1)); --quiet prints it too, then the
	// final assistant text; --json has it in every event.
	env.Out.Lead(s.ID)
	if existing {
		env.Out.ShowLead() // a retry follows the turn only: it shows no agent start
	}
	job := launchJob(env, h, cfg, s.ID, profile, mode, s.Runtime, owner.Job{InitialPrompt: prompt, Offline: c.Offline})
	if err := goLive(env, &job, c.LingerFlag, agent, false); err != nil {
		return err
	}
	res, err := c.firstTurn(env, job, s, existing, prompt != "")
	switch {
	case err == nil:
		env.Out.ShowLead()
	case env.Out.leadHeld():
		err = namedFailure(h, s.ID, err)
	}
	env.Out.Finish()
	if res != nil && res.Session != nil && env.Out.JSON {
		env.Out.Object(res.Session, nil)
	}
	if err == nil && prompt == "" {
		env.Out.Info("session %s waits for input; send the task with: kandev prompt %s \"...\"", s.ID, s.ID)
	}
	return err
}

// newSession checks the flags that must hold before the session exists,
// then creates it (or, for a --key already used, finds it: existing) with
// its setup and runtime, and logs a new session's initial setup.
func (c *startCmd) newSession(env *Env, h *state.Home, cfg *config.Config, cwd, agent, prompt string) (s *state.Session, existing bool, err error) {
	if _, err := c.LingerFlag.duration(cfg, agent); err != nil {
		return nil, false, err // before the session exists
	}
	su, servers, err := c.SetupFlags.initial(cfg, agent)
	if err != nil {
		return nil, false, err // before the session exists
	}
	runtime := c.Runtime
	if runtime == "" {
		runtime = cfg.Agents[agent].Runtime
	}
	if runtime == "process" {
		runtime = ""
	}
	s, existing, err = c.createOnce(env, h, cwd, agent, prompt, func(s *state.Session) { s.Setup, s.MCPConfig, s.Runtime = su, servers, runtime })
	if err != nil {
		return nil, false, err
	}
	if !existing {
		if err := logInitialSetup(h, s); err != nil {
			return nil, false, err
		}
	}
	return s, existing, nil
}

// firstTurn reaches the owner for the session's first turn: a retry of a
// --key follows or shows the turn it started (again), a new session runs it.
func (c *startCmd) firstTurn(env *Env, job owner.Job, s *state.Session, existing, hasPrompt bool) (*owner.Result, error) {
	if existing {
		return c.again(env, job, s)
	}
	// A detached owner gets the prompt as typed over its stdin; the
	// record keeps it redacted.
	return dialResult(env, job, owner.Request{Follows: owner.FollowsFirstTurn, HasPrompt: hasPrompt})
}

// namedFailure is the error of a start that printed no id (its agent never
// started): the one line names the session it left, FAILED or not.
func namedFailure(h *state.Home, id string, err error) error {
	if strings.Contains(err.Error(), id) {
		return err
	}
	if s, lerr := h.LoadSession(id); lerr == nil && s.State == state.StateFailed {
		return fmt.Errorf("%w; session %s is FAILED (fix the agent, then kandev start again)", err, id)
	}
	return fmt.Errorf("%w (session %s; kandev status %s says what it needs)", err, id, id)
}

// agent is the agent to run: --agent, else the default, saying so when the
// demo agent is chosen although a real one is installed.
func (c *startCmd) agent(env *Env, cfg *config.Config) string {
	if c.Agent != "" {
		return c.Agent
	}
	agent, chosen := acp.DefaultAgent(cfg)
	if !chosen {
		if msg := acp.DemoDefaultNotice(acp.RealAgents(acp.Profiles(cfg), acp.Profile.Installed)); msg != "" {
			env.Out.Info("%s", printableLine(msg)) // agent names come from the config
		}
	}
	return agent
}

// create records the new session: its worktree (detected, or made for
// --worktree), its workspace and title, and its parent.
func (c *startCmd) create(env *Env, h *state.Home, cwd, agent, prompt string, withSetup func(*state.Session)) (*state.Session, error) {
	s := owner.NewSessionRecord(env.Now(), cwd, agent, c.Title, c.Workspace, prompt)
	withSetup(s)
	if c.Worktree.Set {
		if err := placeInWorktree(s, c.Worktree.Branch); err != nil {
			return nil, err
		}
	}
	if c.Parent != "" {
		pid, err := h.ResolveID(c.Parent)
		if err != nil {
			return nil, err
		}
		s.ParentID = pid
		s.PendingContext = true
	}
	return s, h.CreateSession(s)
}
