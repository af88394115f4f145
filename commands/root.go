package commands

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/internal/version"
	"github.com/kandev/kandev/state"
)

// Globals are the flags every command takes (docs/reference.md, Global flags);
// each command's help lists them after its own.
type Globals struct {
	Home        string           `help:"kandev home directory (default ~/.kandev)." env:"KANDEV_HOME" placeholder:"DIR" group:"Global flags:"`
	JSON        bool             `name:"json" help:"Print JSON (NDJSON for streaming commands)." group:"Global flags:"`
	Config      string           `help:"Config file (default $KANDEV_HOME/config.toml)." placeholder:"FILE" group:"Global flags:"`
	Permissions string           `help:"Permission mode: ask, approve-reads, approve-all, deny-all, defer (default: config, else ask)." placeholder:"MODE" group:"Global flags:"`
	NoColor     bool             `help:"No colors (also NO_COLOR)." env:"NO_COLOR" group:"Global flags:"`
	Quiet       bool             `short:"q" help:"Print only the final assistant text (start: the session id on the line before it)." group:"Global flags:"`
	Version     kong.VersionFlag `help:"Print the version, its commit and its date." group:"Global flags:"`
}

// CLI is the whole command line.
type CLI struct {
	Globals

	Start      startCmd      `cmd:"" help:"Create a session, launch the agent, run the initial prompt." group:"Everyday flows:"`
	Prompt     promptCmd     `cmd:"" help:"Send a message to a session (restores the agent when needed)." group:"Everyday flows:"`
	Resume     resumeCmd     `cmd:"" help:"Get back in: restore the agent, continue an interrupted turn." group:"Everyday flows:"`
	Status     statusCmd     `cmd:"" help:"The resume verdict and the session's fields." group:"Everyday flows:"`
	List       listCmd       `cmd:"" help:"Sessions, newest activity first." group:"Everyday flows:"`
	Recap      recapCmd      `cmd:"" help:"A bounded snapshot to get back into a session." group:"Everyday flows:"`
	Transcript transcriptCmd `cmd:"" help:"The conversation, paged backwards from the newest entry." group:"Everyday flows:"`

	Attach  attachCmd  `cmd:"" help:"In a terminal: show the last turns, follow live events, send typed lines as prompts." group:"Live sessions:"`
	Wait    waitCmd    `cmd:"" help:"Block until the session's badge is one of those given." group:"Live sessions:"`
	Cancel  cancelCmd  `cmd:"" help:"Cancel the running turn, from any process." group:"Live sessions:"`
	Stop    stopCmd    `cmd:"" help:"Stop explicitly: cancel, never continue automatically." group:"Live sessions:"`
	Close   closeCmd   `cmd:"" help:"End a session's live (lingering) owner and stop its agent." group:"Live sessions:"`
	Approve approveCmd `cmd:"" help:"Allow the permission request a session waits on (mode defer)." group:"Live sessions:"`
	Deny    denyCmd    `cmd:"" help:"Reject the permission request a session waits on (mode defer), or decline its question." group:"Live sessions:"`
	Answer  answerCmd  `cmd:"" help:"Answer the agent's question a session waits on (mode defer)." group:"Live sessions:"`
	Detach  detachCmd  `cmd:"" help:"Release the holder's attach lease." group:"Live sessions:"`
	Set     setCmd     `cmd:"" help:"Change the agent's model, mode or options (live: at once)." group:"Live sessions:"`
	Board   boardCmd   `cmd:"" help:"Every session at a glance by what it needs, live; keys act." group:"Live sessions:"`

	Fork    forkCmd    `cmd:"" help:"A new session with the conversation up to a turn." group:"The conversation:"`
	Rewind  rewindCmd  `cmd:"" help:"Continue as if nothing after a turn had been said (files are not rewound)." group:"The conversation:"`
	Clear   clearCmd   `cmd:"" help:"Start the agent over with no history; the log keeps everything." group:"The conversation:"`
	Switch  switchCmd  `cmd:"" help:"Go on with another agent: the conversation and worktree carry over." group:"The conversation:"`
	Compact compactCmd `cmd:"" help:"Have the agent compact its conversation in a maintenance turn." group:"The conversation:"`
	Search  searchCmd  `cmd:"" help:"Find text in the messages, thoughts and tool calls of sessions." group:"The conversation:"`
	Events  eventsCmd  `cmd:"" help:"Raw events of a session." group:"The conversation:"`
	Usage   usageCmd   `cmd:"" help:"Tokens and cost agents reported, per session, agent or day." group:"The conversation:"`

	Repair    repairCmd    `cmd:"" help:"Reconcile a session after a crash without relaunching." group:"After a crash:"`
	Recover   recoverCmd   `cmd:"" help:"Continue every eligible interrupted session." group:"After a crash:"`
	Doctor    doctorCmd    `cmd:"" help:"Check the home, agents and git; print the fix for each problem." group:"After a crash:"`
	Autostart autostartCmd `cmd:"" help:"Run kandev recover --all at login: enable, disable, status." group:"After a crash:"`

	Done    doneCmd    `cmd:"" help:"Mark a session COMPLETED." group:"Finishing and housekeeping:"`
	Archive archiveCmd `cmd:"" help:"Mark a session CANCELLED." group:"Finishing and housekeeping:"`
	Prune   pruneCmd   `cmd:"" help:"Delete the files of finished sessions." group:"Finishing and housekeeping:"`

	Export exportCmd `cmd:"" help:"Write a session (record and events) as one JSONL bundle to stdout." group:"Moving sessions:"`
	Import importCmd `cmd:"" help:"Create a session from a bundle written by kandev export." group:"Moving sessions:"`
	Push   pushCmd   `cmd:"" help:"Send sessions to a git remote, to continue elsewhere." group:"Moving sessions:"`
	Pull   pullCmd   `cmd:"" help:"Bring sessions from a git remote, fast-forward only." group:"Moving sessions:"`
	Trust  trustCmd  `cmd:"" help:"Let the MCP servers of a pulled session run here (shows them first)." group:"Moving sessions:"`

	Agents     agentsCmd     `cmd:"" help:"Agent profiles (--probe reports their capabilities)." group:"Agents, editors and the shell:"`
	ACP        acpCmd        `cmd:"" name:"acp" help:"Serve kandev to an editor as an ACP agent on stdio." group:"Agents, editors and the shell:"`
	Demo       demoCmd       `cmd:"" help:"The whole story on the built-in demo agent, in a temporary home." group:"Agents, editors and the shell:"`
	DemoAgent  demoAgentCmd  `cmd:"" name:"demo-agent" help:"Run the built-in demo ACP agent on stdio." group:"Agents, editors and the shell:"`
	Completion completionCmd `cmd:"" help:"Print a shell completion script (bash, zsh, fish)." group:"Agents, editors and the shell:"`

	Complete  completeCmd  `cmd:"" name:"__complete" hidden:"" help:"Print completion candidates (used by the completion scripts)."`
	Serve     serveCmd     `cmd:"" name:"__serve" hidden:"" help:"Run a session's owner detached (started by start, prompt and resume)."`
	Man       manCmd       `cmd:"" name:"__man" hidden:"" help:"Print the kandev(1) man page in roff (for the release archives)."`
	Reference referenceCmd `cmd:"" name:"__reference" hidden:"" help:"Print docs/reference.md, the command reference, in Markdown."`
	NotifyRun notifyRunCmd `cmd:"" name:"__notify" hidden:"" help:"Run the [notify] command with a timeout (started by an owner)."`
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
	config *config.Config
	// committed: the command's effect is made and reported, so a SIGTERM
	// that arrived meanwhile does not turn its success into exit 143.
	committed bool
}

// A command that changes something is all or nothing for a signal: one
// that came before the change stops it with nothing done (exit 143 or
// 130); once the change is written the command finishes, reports it and
// exits 0, saying the signal came too late (docs/resume.md, "Signals: what survives what").

// beforeCommit ends a command whose signal came before its change: what
// names the command, for the message.
func (e *Env) beforeCommit(what string) error {
	if e.Ctx.Err() != nil {
		return fmt.Errorf("%w: %s was stopped before it changed anything", context.Cause(e.Ctx), what)
	}
	return nil
}

// commit marks the command's change as written: a signal from now on does
// not turn its success into exit 143; one that came already is said.
func (e *Env) commit(what string) {
	e.committed = true
	if e.Ctx.Err() != nil {
		e.Out.Warn(fmt.Sprintf("%s arrived after %s was written: the change is kept", signalName(e.Ctx), what))
	}
}

// Home opens $KANDEV_HOME lazily: commands that do not need it never touch the disk.
func (e *Env) Home() (*state.Home, error) {
	if e.home != nil {
		return e.home, nil
	}
	dir, err := e.homeDir()
	if err != nil {
		return nil, err
	}
	h, err := state.OpenHome(dir)
	if err != nil {
		return nil, err
	}
	e.home = h
	return h, nil
}

// homeDir is the home's directory (--home, KANDEV_HOME, else ~/.kandev),
// absolute, whether or not it exists.
func (e *Env) homeDir() (string, error) {
	dir := e.G.Home
	if dir == "" {
		var err error
		if dir, err = state.DefaultHomeDir(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// Config loads the config lazily.
func (e *Env) Config() (*config.Config, error) {
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
	c, err := config.LoadConfig(path, explicit)
	if err != nil {
		return nil, err
	}
	if err := checkConfigNames(c, path); err != nil {
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
		m = owner.PermAsk
	}
	if !owner.ValidPermissionMode(m) {
		return "", &usageError{Err: owner.ErrBadPermissionMode(m)}
	}
	return m, nil
}

// Run executes kandev with args and returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if i := firstWord(args); i >= 0 && args[i] == "help" {
		// kandev help resume: the help of resume, as git and gh give it.
		args = append(append(append([]string{}, args[:i]...), args[i+1:]...), "--help")
	}
	if len(args) == 0 {
		writeOverview(stdout)
		return ExitOK
	}
	if len(args) == 1 && args[0] == "--version" {
		// What kong's version flag prints, without building a model to parse
		// one flag (about a tenth of kandev --version).
		fmt.Fprintln(stdout, version.Get().String())
		return ExitOK
	}
	cli := &CLI{}
	globals := &cli.Globals
	out := &Output{Out: stdout, Err: stderr}
	exitCode := -1
	grammar, command := commandModel(cli, args)
	parser, err := kong.New(grammar, append(command, parserOptions(stdout, stderr, &exitCode)...)...)
	if err != nil {
		fmt.Fprintln(stderr, "kandev:", err)
		return ExitError
	}
	kctx, code, done := parse(parser, args, out, &exitCode)
	if done {
		return code
	}
	out.JSON, out.Quiet = globals.JSON, globals.Quiet
	color := !globals.NoColor && os.Getenv("NO_COLOR") == "" && !globals.JSON
	out.Color, out.ErrColor = color && isTerminal(stdout), color && isTerminal(stderr)
	// A closed pipe on stdout (kandev start | head -1) must not kill an owner mid-turn.
	signal.Ignore(syscall.SIGPIPE)
	tout, terr := &hangupWriter{w: stdout}, &hangupWriter{w: stderr}
	out.Out, out.Err = tout, terr
	sigs := signalsFor(kctx.Selected(), func() { tout.gone.Store(true); terr.gone.Store(true) })
	defer sigs.stop()
	env := &Env{G: globals, Stdin: stdin, Out: out, Ctx: sigs.ctx, Abort: sigs.abort, Now: time.Now}
	err = kctx.Run(env)
	if err == nil && sigs.terminated() && !env.committed {
		err = fmt.Errorf("%w by SIGTERM", owner.ErrShutdown)
	}
	if err != nil {
		out.Error(err)
		return ExitCode(err)
	}
	return ExitOK
}

type exitSignal struct{}

// parserOptions are kong's options for every run: kong.Exit panics with
// exitSignal after setting *exitCode, for parse to recover.
func parserOptions(stdout, stderr io.Writer, exitCode *int) []kong.Option {
	return []kong.Option{
		kong.Name("kandev"),
		kong.Description("Run ACP coding agents in durable, resumable sessions."),
		kong.Vars{"version": version.Get().String()},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { *exitCode = code; panic(exitSignal{}) }),
		// "--limit -1" is the value -1 (refused by the command's range
		// check, saying the range), not a short flag.
		kong.WithHyphenPrefixedParameters(true),
		helpLayout,
	}
}

// commandModel is what kong parses args against. Kong reads the tags and
// help of every command it is given, and for all forty of them that is
// most of the start-up of a command such as kandev list; so for a command
// word it gets the global flags and that one command, added as kong adds
// any command it is not given in a struct (kong.DynamicCommand). With no
// command word, an unknown one, or a command that reads the whole model
// (__complete, __man, __reference), it gets the whole CLI.
func commandModel(cli *CLI, args []string) (grammar any, command []kong.Option) {
	i := firstWord(args)
	if i < 0 {
		return cli, nil
	}
	t := reflect.TypeFor[CLI]()
	for j := range t.NumField() {
		f := t.Field(j)
		name, named := f.Tag.Lookup("name")
		if !named {
			name = strings.ToLower(f.Name)
		}
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd || name != args[i] {
			continue
		}
		if name == "__complete" || name == "__man" || name == "__reference" {
			break
		}
		var tags []string
		if _, hidden := f.Tag.Lookup("hidden"); hidden {
			tags = append(tags, "hidden")
		}
		cmd := reflect.ValueOf(cli).Elem().Field(j).Addr().Interface()
		return &cli.Globals, []kong.Option{kong.DynamicCommand(name, f.Tag.Get("help"), f.Tag.Get("group"), cmd, tags...)}
	}
	return cli, nil
}

// helpLayout is how --help reads: the commands one line each under the
// groups of their flows, then the flags; a command's own flags come before
// the global ones (their group, "Global flags:").
var helpLayout = kong.ConfigureHelp(kong.HelpOptions{Compact: true, FlagsLast: true})

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
		msg := parseErrorMessage(p, args, err.Error())
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

// parseErrorMessage is kong's complaint with the way to the help: the
// command's own when the command word is known, else the list of commands.
func parseErrorMessage(p *kong.Kong, args []string, msg string) string {
	cmd, first := "", ""
	if i := firstWord(args); i >= 0 {
		first = args[i]
		for _, n := range p.Model.Children {
			if n.Name == first && !n.Hidden {
				cmd = first
			}
		}
	}
	if cmd != "" {
		return msg + " (run kandev " + cmd + " --help)"
	}
	if rest, ok := strings.CutPrefix(msg, "unexpected argument "+first); ok && first != "" {
		msg = fmt.Sprintf("unknown command %q%s", first, rest)
	}
	return msg + " (kandev --help lists the commands)"
}

// firstWord is the index in args of the first word that is neither a flag
// nor the value of a global flag (the command word), -1 when none.
func firstWord(args []string) int {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return -1
		case a == "--home" || a == "--config" || a == "--permissions":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return -1
}

// readPrompt joins PROMPT words, or reads stdin for "-": a prompt over
// state.MaxPromptBytes is refused here, before any agent or inbox sees it
// (stdin is read no further than the limit).
func readPrompt(words []string, stdin io.Reader) (string, error) {
	if len(words) == 1 && words[0] == "-" {
		const limit = state.MaxPromptBytes + 1<<10 // room for trailing newlines
		b, err := io.ReadAll(io.LimitReader(bufio.NewReader(stdin), limit))
		if err != nil {
			return "", err
		}
		if len(b) == limit {
			return "", &state.PromptTooLargeError{Size: len(b), More: true}
		}
		text := strings.TrimRight(string(b), "\n")
		return text, state.CheckPrompt(text)
	}
	text := strings.Join(words, " ")
	return text, state.CheckPrompt(text)
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
