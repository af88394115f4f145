package commands

import (
	"bufio"
	"fmt"
	"os"

	"github.com/kandev/kandev/board"
	"github.com/kandev/kandev/state"
)

// boardCmd is kandev board.
type boardCmd struct {
	Once      bool   `help:"Print the board once as text (with --json: its columns and sessions) and exit."`
	AllDone   bool   `name:"all-done" help:"Show every finished session (the board folds all but the newest ten)."`
	Workspace string `help:"Only this project's sessions." placeholder:"W"`
}

// Help shows an example.
func (c *boardCmd) Help() string {
	return "Example:\n  kandev board\n  kandev board --once"
}

// The board only reads the home; its actions are kandev commands of their own.
func (c *boardCmd) readsOnly() bool { return true }

// Run shows the board.
func (c *boardCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	src, err := boardSource(env, h)
	if err != nil {
		return err
	}
	if c.Once {
		return c.once(env, src)
	}
	in, inOK := env.Stdin.(*os.File)
	if !inOK || !isTerminal(in) || !isTerminal(os.Stdout) || env.Out.JSON {
		return usagef("kandev board needs a terminal; kandev board --once prints it as text (--json for scripts)")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the kandev binary to run actions with: %w", err)
	}
	run := board.Runner{Exe: exe, Base: childGlobals(env.G, h)}
	term := board.Terminal{In: in, Out: os.Stdout, Color: env.Out.Color}
	return board.Run(env.Ctx, src, run, term, c.filter(), c.AllDone, env.Now)
}

func (c *boardCmd) filter() board.Filter { return board.Filter{Project: c.Workspace} }

// once prints the board as text or JSON.
func (c *boardCmd) once(env *Env, src *board.Source) error {
	defer readingEverySession()()
	lo, err := src.LoadAll()
	if err != nil {
		return err
	}
	if lo.Newer > 0 {
		env.Out.Warn(fmt.Sprintf("%d session(s) not shown: written by a newer kandev; upgrade kandev", lo.Newer))
	}
	if env.Out.JSON {
		env.Out.Object(board.JSON(lo.Cards, c.filter()), nil)
		return nil
	}
	// The cards' text is made printable by the board; the writer is not
	// the escaping one, so that the headings keep their colour.
	bw := bufio.NewWriterSize(env.Out.Out, 64<<10)
	if err := board.WriteText(bw, lo.Cards, c.filter(), c.AllDone, board.Renderer(os.Stdout, env.Out.Color), env.Now()); err != nil {
		return err
	}
	return bw.Flush()
}

// boardSource reads sessions with the badges kandev list gives them.
func boardSource(env *Env, h *state.Home) (*board.Source, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	mode, err := env.PermissionMode()
	if err != nil {
		return nil, err
	}
	p := probeWith(h, cfg, mode, "", false, env.Now())
	assess := func(s *state.Session) board.Facts {
		q := *p // the clock of this look; the rest is read only
		q.now = env.Now()
		return board.Facts{Badge: q.assess(s, probeBadge).Badge, WarmUntil: warmUntil(h, s)}
	}
	return &board.Source{Home: h, Assess: assess}, nil
}

// childGlobals are the global flags the board's actions run with: its own
// home, config and permission mode.
func childGlobals(g *Globals, h *state.Home) []string {
	args := []string{"--home", h.Dir}
	if g.Config != "" {
		args = append(args, "--config", g.Config)
	}
	if g.Permissions != "" {
		args = append(args, "--permissions", g.Permissions)
	}
	if g.NoColor {
		args = append(args, "--no-color")
	}
	return args
}
