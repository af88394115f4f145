package commands

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// Globals are the flags every command takes (SPEC section 2).
type Globals struct {
	Home        string           `help:"kandev home directory (default ~/.kandev)." env:"KANDEV_HOME" placeholder:"DIR"`
	JSON        bool             `name:"json" help:"Print JSON (NDJSON for streaming commands)."`
	Config      string           `help:"Config file (default $KANDEV_HOME/config.toml)." placeholder:"FILE"`
	Permissions string           `help:"Permission mode: ask, approve-reads, approve-all, deny-all, defer (default: config, else ask)." placeholder:"MODE"`
	NoColor     bool             `help:"No colors (also NO_COLOR)." env:"NO_COLOR"`
	Quiet       bool             `short:"q" help:"Print only the final assistant text."`
	Version     kong.VersionFlag `help:"Print the version."`
}

// CLI is the whole command line.
type CLI struct {
	Globals

	Start     StartCmd     `cmd:"" help:"Create a session, launch the agent, run the initial prompt."`
	Prompt    PromptCmd    `cmd:"" help:"Send a message to a session (restores the agent when needed)."`
	Resume    ResumeCmd    `cmd:"" help:"Get back into a session: relaunch, restore, continue an interrupted turn."`
	Status    StatusCmd    `cmd:"" help:"The resume verdict and the session's fields."`
	List      ListCmd      `cmd:"" help:"Sessions, newest activity first."`
	Search    SearchCmd    `cmd:"" help:"Find text in the messages, thoughts and tool calls of every session."`
	Events    EventsCmd    `cmd:"" help:"Raw events of a session."`
	Agents    AgentsCmd    `cmd:"" help:"Agent profiles (--probe reports their capabilities)."`
	Cancel    CancelCmd    `cmd:"" help:"Cancel the running turn, from any process."`
	Stop      StopCmd      `cmd:"" help:"Stop explicitly: cancel, never continue automatically."`
	Detach    DetachCmd    `cmd:"" help:"Release the holder's attach lease."`
	Close     CloseCmd     `cmd:"" help:"End a session's live (lingering) owner and stop its agent."`
	Attach    AttachCmd    `cmd:"" help:"In a terminal: show the last turns, follow live events, send typed lines as prompts."`
	Wait      WaitCmd      `cmd:"" help:"Block until the session's badge is one of those given."`
	Approve   ApproveCmd   `cmd:"" help:"Allow the permission request a session waits on (mode defer)."`
	Deny      DenyCmd      `cmd:"" help:"Reject the permission request a session waits on (mode defer)."`
	Repair    RepairCmd    `cmd:"" help:"Reconcile a session after a crash without relaunching."`
	Recover   RecoverCmd   `cmd:"" help:"Continue every eligible interrupted session."`
	Done      DoneCmd      `cmd:"" help:"Mark a session COMPLETED."`
	Archive   ArchiveCmd   `cmd:"" help:"Mark a session CANCELLED."`
	Fork      ForkCmd      `cmd:"" help:"A new session with the conversation up to a turn; the parent is untouched."`
	Rewind    RewindCmd    `cmd:"" help:"Continue as if nothing after a turn had been said (files are not rewound)."`
	Clear     ClearCmd     `cmd:"" help:"Start the agent over with no history; the log keeps everything."`
	Compact   CompactCmd   `cmd:"" help:"Have the agent compact its conversation (its own command) in a maintenance turn."`
	Demo      DemoCmd      `cmd:"" help:"The whole story on the built-in demo agent, in a temporary home."`
	DemoAgent DemoAgentCmd `cmd:"" name:"demo-agent" help:"Run the built-in demo ACP agent on stdio."`
	ACP       ACPCmd       `cmd:"" name:"acp" help:"Serve kandev to an editor as an ACP agent on stdio."`

	Transcript TranscriptCmd `cmd:"" help:"The assembled conversation, paged backwards from the newest entry."`
	Recap      RecapCmd      `cmd:"" help:"A bounded snapshot to get back into a session: state, markers, last messages, queue."`
	Export     ExportCmd     `cmd:"" help:"Write a session (record and events) as one JSONL bundle to stdout."`
	Usage      UsageCmd      `cmd:"" help:"Tokens and cost agents reported, per session, agent or day."`
	Import     ImportCmd     `cmd:"" help:"Create a session from a bundle written by kandev export."`
	Push       PushCmd       `cmd:"" help:"Send sessions to a git remote (refs/kandev/sessions/<id>), to continue elsewhere."`
	Pull       PullCmd       `cmd:"" help:"Bring sessions from a git remote, fast-forward only."`

	Doctor     DoctorCmd     `cmd:"" help:"Check the home, the agents and git; print the fix for each problem."`
	Prune      PruneCmd      `cmd:"" help:"Delete the files of finished sessions."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script (bash, zsh, fish)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"Print completion candidates (used by the completion scripts)."`
	Serve      ServeCmd      `cmd:"" name:"__serve" hidden:"" help:"Run a session's owner detached (started by start, prompt and resume)."`
}

// Env is what commands receive instead of reaching for globals.
type Env struct {
	G     *Globals
	Stdin io.Reader
	Out   *Output
	Ctx   context.Context
	// Abort is closed by a second SIGINT or SIGTERM: stop at once.
	Abort  <-chan struct{}
	Now    func() time.Time
	home   *state.Home
	config *state.Config
	// committed: the command's effect is made and reported, so a SIGTERM
	// that arrived meanwhile does not turn its success into exit 143.
	committed bool
}

// Home opens $KANDEV_HOME lazily: commands that do not need it never touch the disk.
func (e *Env) Home() (*state.Home, error) {
	if e.home != nil {
		return e.home, nil
	}
	dir := e.G.Home
	if dir == "" {
		var err error
		if dir, err = state.DefaultHomeDir(); err != nil {
			return nil, err
		}
	}
	h, err := state.OpenHome(dir)
	if err != nil {
		return nil, err
	}
	e.home = h
	return h, nil
}

// Config loads the config lazily.
func (e *Env) Config() (*state.Config, error) {
	if e.config != nil {
		return e.config, nil
	}
	path, explicit := e.G.Config, e.G.Config != ""
	if !explicit {
		h, err := e.Home()
		if err != nil {
			return nil, err
		}
		path = h.ConfigPath()
	}
	c, err := state.LoadConfig(path, explicit)
	if err != nil {
		return nil, err
	}
	e.config = c
	return c, nil
}

// PermissionMode is the flag, else the config, else ask.
func (e *Env) PermissionMode() (string, error) {
	m := e.G.Permissions
	if m == "" {
		c, err := e.Config()
		if err != nil {
			return "", err
		}
		m = c.Permissions.Mode
	}
	if m == "" {
		m = acp.PermAsk
	}
	if !acp.ValidPermissionMode(m) {
		return "", &UsageError{Err: acp.ErrBadPermissionMode(m)}
	}
	return m, nil
}

// Run executes kandev with args and returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeOverview(stdout)
		return ExitOK
	}
	var cli CLI
	out := &Output{Out: stdout, Err: stderr}
	exitCode := -1
	parser, err := kong.New(&cli,
		kong.Name("kandev"),
		kong.Description("Run ACP coding agents in durable, resumable sessions."),
		kong.Vars{"version": "kandev " + acp.Version},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exitCode = code; panic(exitSignal{}) }),
	)
	if err != nil {
		fmt.Fprintln(stderr, "kandev:", err)
		return ExitError
	}
	kctx, code, done := parse(parser, args, out, &exitCode)
	if done {
		return code
	}
	out.JSON, out.Quiet = cli.JSON, cli.Quiet
	color := !cli.NoColor && os.Getenv("NO_COLOR") == "" && !cli.JSON
	out.Color, out.ErrColor = color && isTerminal(stdout), color && isTerminal(stderr)
	// A closed pipe on stdout (kandev start | head -1) must not kill an owner mid-turn.
	signal.Ignore(syscall.SIGPIPE)
	tout, terr := &hangupWriter{w: stdout}, &hangupWriter{w: stderr}
	out.Out, out.Err = tout, terr
	sigs := watchSignals(func() { tout.gone.Store(true); terr.gone.Store(true) })
	defer sigs.stop()
	env := &Env{G: &cli.Globals, Stdin: stdin, Out: out, Ctx: sigs.ctx, Abort: sigs.abort, Now: time.Now}
	err = kctx.Run(env)
	if err == nil && sigs.terminated() && !env.committed {
		err = fmt.Errorf("%w by SIGTERM", acp.ErrShutdown)
	}
	if err != nil {
		out.Error(err)
		return ExitCode(err)
	}
	return ExitOK
}

type exitSignal struct{}

// parse runs kong's parser, turning its exits (help, version, usage errors) into codes.
func parse(p *kong.Kong, args []string, out *Output, exitCode *int) (kctx *kong.Context, code int, done bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitSignal); !ok {
				panic(r)
			}
			kctx, code, done = nil, *exitCode, true
			if code != 0 {
				code = ExitUsage
			}
		}
	}()
	ctx, err := p.Parse(args)
	if err != nil {
		msg := err.Error()
		if ctx != nil && commandPath(ctx) != "" {
			msg += " (run kandev " + commandPath(ctx) + " --help)"
		}
		// The flags did not parse, so --json is read from the words themselves.
		out.JSON = jsonRequested(args)
		out.Error(usagef("%s", msg))
		return nil, ExitUsage, true
	}
	return ctx, 0, false
}

// jsonRequested reports whether --json is among the flags of args (before a
// lone "--", after which words are arguments).
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

func commandPath(ctx *kong.Context) string {
	cmd := ctx.Command()
	if i := strings.IndexByte(cmd, ' '); i >= 0 {
		cmd = cmd[:i]
	}
	return cmd
}

// readPrompt joins PROMPT words, or reads stdin for "-".
func readPrompt(words []string, stdin io.Reader) (string, error) {
	if len(words) == 1 && words[0] == "-" {
		b, err := io.ReadAll(bufio.NewReader(stdin))
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(b), "\n"), nil
	}
	return strings.Join(words, " "), nil
}

// absDir resolves a --cwd value.
func absDir(d string) (string, error) {
	if d == "" {
		d = "."
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", usagef("--cwd %s is not a directory", d)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}
