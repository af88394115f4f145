package commands

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// completionScripts are the shell scripts kandev completion prints. They pass
// the words before the cursor to `kandev __complete --` and offer what it
// prints; with nothing to offer, the shell completes files.
//
//go:embed completions/kandev.bash completions/kandev.zsh completions/kandev.fish
var completionScripts embed.FS

// completionCmd is kandev completion: it prints a script for the shell.
// Each script calls `kandev __complete -- WORDS...` back for the candidates,
// so the completions follow the binary and the sessions in the home.
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

// Help shows an example.
func (c *completionCmd) Help() string {
	return "Examples:\n" +
		"  source <(kandev completion bash)                                  # bash: in ~/.bashrc\n" +
		"  source <(kandev completion zsh)                                   # zsh: in ~/.zshrc, after compinit\n" +
		"  kandev completion fish > ~/.config/fish/completions/kandev.fish   # fish"
}

func (c *completionCmd) readsOnly() bool { return true }

func (c *completeCmd) readsOnly() bool { return true }

// Run prints the script.
func (c *completionCmd) Run(env *Env) error {
	script, err := completionScripts.ReadFile("completions/kandev." + c.Shell)
	if err != nil {
		return err
	}
	_, err = env.Out.Out.Write(script)
	return err
}

// completeCmd is the hidden helper the completion scripts call: it prints
// one candidate a line, "value<TAB>description", best first.
type completeCmd struct {
	Words []string `arg:"" optional:"" help:"The words after kandev; the last is the one being completed."`
}

// Run prints the candidates for the last word.
func (c *completeCmd) Run(env *Env, k *kong.Context) error {
	words := c.Words
	if len(words) == 0 {
		words = []string{""}
	}
	src := completionSource{home: completionHome(env, words), config: completionConfig(env, words)}
	for _, cand := range complete(k.Model.Node, words, src) {
		if cand.Desc != "" {
			fmt.Fprintf(env.Out.Out, "%s\t%s\n", cand.Value, cand.Desc)
		} else {
			fmt.Fprintln(env.Out.Out, cand.Value)
		}
	}
	return nil
}

// candidate is one completion.
type candidate struct{ Value, Desc string }

// completionSource supplies the values that live outside the grammar.
type completionSource struct {
	home   *state.Home // nil when there is no home yet
	config *config.Config
}

// maxCandidates keeps a TAB on a large home short: the newest sessions first.
const maxCandidates = 200

// sessions are the home's sessions, newest activity first, that keep says are worth offering.
func (s completionSource) sessions(keep func(*state.Session) bool) []*state.Session {
	if s.home == nil {
		return nil
	}
	all, err := s.home.ListSessions()
	if err != nil {
		return nil
	}
	var out []*state.Session
	for _, x := range all {
		if keep == nil || keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// completionHome is the home the completed command line names (--home), else
// the env's, without creating it: completion must not write to the disk.
func completionHome(env *Env, words []string) *state.Home {
	dir := flagInWords(words, "home")
	if dir == "" {
		dir = env.G.Home
	}
	if dir == "" {
		dir, _ = state.DefaultHomeDir()
	}
	if dir == "" {
		return nil // no home: no ids to complete
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok { // typed on the line, not yet expanded by the shell
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, rest)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if st, err := os.Stat(filepath.Join(abs, "sessions")); err != nil || !st.IsDir() {
		return nil
	}
	return &state.Home{Dir: abs}
}

// completionConfig is the config the completed command line names, else the
// home's; an unreadable config leaves the built-in agents.
func completionConfig(env *Env, words []string) *config.Config {
	path := flagInWords(words, "config")
	if path == "" {
		path = env.G.Config
	}
	if path == "" {
		h := completionHome(env, words)
		if h == nil {
			return &config.Config{}
		}
		path = h.ConfigPath()
	}
	c, err := config.LoadConfig(path, false)
	if err != nil {
		return &config.Config{}
	}
	return c
}

// flagInWords finds --name VALUE or --name=VALUE among the words before the last.
func flagInWords(words []string, name string) string {
	done := words[:len(words)-1]
	for i, w := range done {
		if w == "--"+name && i+1 < len(done) {
			return done[i+1]
		}
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// complete returns the candidates for the last of words, walking the
// grammar through the words before it the way the parser would.
func complete(app *kong.Node, words []string, src completionSource) []candidate {
	cur := words[len(words)-1]
	node := app
	args := 0              // positional arguments seen at node
	onlyArgs := false      // after "--"
	var pending *kong.Flag // a flag waiting for its value
	for _, w := range words[:len(words)-1] {
		switch {
		case pending != nil:
			pending = nil
		case onlyArgs:
			args++
		case w == "--":
			onlyArgs = true
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w[2:], "=")
			if f := findFlag(node, name); f != nil && !hasValue && takesValue(f) {
				pending = f
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			// -x VALUE; a cluster like -qi takes no value.
			if f := findShort(node, rune(w[1])); f != nil && len(w) == 2 && takesValue(f) {
				pending = f
			}
		default:
			if child := findChild(node, w); child != nil && args == 0 {
				node, args = child, 0
				continue
			}
			args++
		}
	}
	if pending != nil {
		return withPrefix(flagValues(node, pending, src), cur)
	}
	if !onlyArgs && strings.HasPrefix(cur, "--") {
		if name, _, ok := strings.Cut(cur[2:], "="); ok {
			f := findFlag(node, name)
			if f == nil || !takesValue(f) {
				return nil
			}
			vals := flagValues(node, f, src)
			for i := range vals {
				vals[i].Value = "--" + name + "=" + vals[i].Value
			}
			return withPrefix(vals, cur)
		}
	}
	if !onlyArgs && strings.HasPrefix(cur, "-") {
		return withPrefix(flagNames(node), cur)
	}
	var out []candidate
	if args == 0 {
		for _, child := range node.Children {
			if !child.Hidden {
				out = append(out, candidate{child.Name, child.Help})
			}
		}
	}
	if arg := positionalAt(node, args); arg != nil {
		out = append(out, argValues(node, arg, src)...)
	}
	return withPrefix(out, cur)
}

func withPrefix(cands []candidate, prefix string) []candidate {
	var out []candidate
	for _, c := range cands {
		if strings.HasPrefix(c.Value, prefix) && len(out) < maxCandidates {
			out = append(out, c)
		}
	}
	return out
}

func takesValue(f *kong.Flag) bool { return !f.IsBool() && !f.IsCounter() }

func findFlag(node *kong.Node, name string) *kong.Flag {
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if f.Name == name {
				return f
			}
			for _, a := range f.Aliases {
				if a == name {
					return f
				}
			}
		}
	}
	return nil
}

func findShort(node *kong.Node, r rune) *kong.Flag {
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if f.Short == r {
				return f
			}
		}
	}
	return nil
}

func findChild(node *kong.Node, name string) *kong.Node {
	for _, c := range node.Children {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// flagNames are the command's own flags first, then the global ones.
func flagNames(node *kong.Node) []candidate {
	groups := node.AllFlags(true)
	var out []candidate
	for i := len(groups) - 1; i >= 0; i-- {
		for _, f := range groups[i] {
			out = append(out, candidate{"--" + f.Name, firstSentence(f.Help)})
			if f.Short != 0 {
				out = append(out, candidate{"-" + string(f.Short), firstSentence(f.Help)})
			}
		}
	}
	return out
}

func positionalAt(node *kong.Node, i int) *kong.Value {
	switch {
	case i < len(node.Positional):
		return node.Positional[i]
	case len(node.Positional) > 0 && node.Positional[len(node.Positional)-1].IsSlice():
		return node.Positional[len(node.Positional)-1]
	}
	return nil
}

// commandsOnLiveSessions act only on sessions that are not finished, so
// finished ones are not offered for them.
var commandsOnLiveSessions = map[string]bool{
	"prompt": true, "resume": true, "cancel": true, "stop": true, "detach": true, "done": true, "archive": true,
	"close": true, "attach": true, "approve": true, "deny": true,
	"rewind": true, "clear": true, "compact": true,
}

func argValues(node *kong.Node, arg *kong.Value, src completionSource) []candidate {
	if arg.Enum != "" {
		return enumValues(arg.Enum)
	}
	if arg.Name == "id" {
		var keep func(*state.Session) bool
		if commandsOnLiveSessions[node.Name] {
			keep = func(s *state.Session) bool { return !state.IsTerminal(s.State) }
		}
		return sessionCandidates(src.sessions(keep))
	}
	return nil
}

func flagValues(node *kong.Node, f *kong.Flag, src completionSource) []candidate {
	if f.Enum != "" {
		return enumValues(f.Enum)
	}
	switch f.Name {
	case "agent":
		var out []candidate
		for _, p := range acp.Profiles(src.config) {
			out = append(out, candidate{p.Name, strings.ReplaceAll(strings.Join(p.Command, " "), "{kandev}", "kandev")})
		}
		return out
	case "parent":
		return sessionCandidates(src.sessions(nil))
	case "workspace":
		var out []candidate
		seen := map[string]bool{}
		for _, s := range src.sessions(nil) {
			if s.Workspace != "" && !seen[s.Workspace] {
				seen[s.Workspace] = true
				out = append(out, candidate{s.Workspace, ""})
			}
		}
		return out
	case "state":
		states := []string{state.StateWaitingForInput, state.StateRunning, state.StateStarting, state.StateCreated,
			state.StateCompleted, state.StateFailed, state.StateCancelled}
		if node.Name == "prune" {
			states = terminalStates
		}
		var out []candidate
		for _, s := range states {
			out = append(out, candidate{s, ""})
		}
		return out
	case "permissions":
		return enumValues("ask,approve-reads,approve-all,deny-all")
	}
	return nil // paths and free text: the shell completes file names
}

func enumValues(enum string) []candidate {
	var out []candidate
	for _, v := range strings.Split(enum, ",") {
		out = append(out, candidate{strings.TrimSpace(v), ""})
	}
	return out
}

// sessionCandidates keep the order given: newest activity first.
func sessionCandidates(ss []*state.Session) []candidate {
	var out []candidate
	for _, s := range ss {
		title := s.Title
		title = history.Clip(title, 50)
		out = append(out, candidate{s.ID, strings.TrimSpace(s.State + " " + title)})
	}
	return out
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
