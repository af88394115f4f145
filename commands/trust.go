package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// trustCmd is kandev trust.
type trustCmd struct {
	SessionRef
	Yes    bool `short:"y" help:"Trust without asking (for scripts: read what it prints first)."`
	DryRun bool `name:"dry-run" help:"Only show what would run; trust nothing."`
}

// Help shows an example.
func (c *trustCmd) Help() string {
	return "MCP servers a pull brought run only once this machine agrees: trust prints each\n" +
		"server's command, arguments, env values, url and headers (every value that is not\n" +
		"a ${VAR} reference), asks on a terminal, then records here (never on the remote)\n" +
		"that they may run. Without a terminal it refuses unless --yes.\n\n" +
		"Example:\n  kandev trust 20261130-0915\n  kandev trust 20261130-0915 --dry-run\n  kandev trust 20261130-0915 --yes"
}

// trustedServer is what kandev trust shows of one MCP server: what runs,
// with which values, and which variables of this machine's environment
// its ${VAR} references are given.
type trustedServer struct {
	Name        string            `json:"name"`
	Type        string            `json:"type,omitempty"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	EnvNames    []string          `json:"env_names,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	URL         string            `json:"url,omitempty"`
	HeaderNames []string          `json:"header_names,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	// ReadsEnv are the variables of this machine's environment its ${VAR}
	// references expand to at launch.
	ReadsEnv []string `json:"reads_env,omitempty"`
}

var refVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// readsEnv are the variables m's references name, sorted, once each.
func readsEnv(m state.MCPServer) []string {
	seen := map[string]bool{}
	texts := append(slices.Collect(maps.Values(m.Env)), slices.Collect(maps.Values(m.Headers))...)
	for _, t := range append(texts, m.URL) {
		for _, sub := range refVar.FindAllStringSubmatch(t, -1) {
			seen[sub[1]] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// trustStep is what kandev trust does once it has shown the servers.
type trustStep int

const (
	trustNothingWaits trustStep = iota // nothing pending: say so
	trustShowOnly                      // --dry-run
	trustRecord                        // --yes
	trustAsk                           // a terminal: y/N
	trustRefuse                        // no terminal, no --yes
)

// decideTrust is the rule: a dry run only shows; nothing pending needs no
// answer; --yes records; a terminal asks; anything else refuses, so a
// script never trusts by running a command that used to only show.
func decideTrust(pending, yes, dryRun, terminal bool) trustStep {
	switch {
	case dryRun:
		return trustShowOnly
	case !pending:
		return trustNothingWaits
	case yes:
		return trustRecord
	case terminal:
		return trustAsk
	}
	return trustRefuse
}

// errNotTrusted: the person answered no (exit 1).
var errNotTrusted = errors.New("not trusted")

// Run shows the session's MCP servers, then records that this machine
// trusts them when the person agrees (or --yes).
func (c *trustCmd) Run(env *Env) error {
	h, s, err := c.load(env, needAny)
	if err != nil {
		return err
	}
	shown := s.MCPConfig
	servers := []trustedServer{}
	for _, m := range shown {
		servers = append(servers, trustedServer{Name: m.Name, Type: m.Type, Command: m.Command, Args: m.Args,
			EnvNames: slices.Sorted(maps.Keys(m.Env)), Env: m.Env, URL: m.URL,
			HeaderNames: slices.Sorted(maps.Keys(m.Headers)), Headers: m.Headers, ReadsEnv: readsEnv(m)})
	}
	was := s.TrustPending
	if !env.Out.JSON {
		w := env.Out.Out
		if len(servers) == 0 {
			fmt.Fprintf(w, "session %s has no MCP servers\n", s.ID)
		}
		for _, m := range servers {
			describeServer(w, m)
		}
	}
	// Shown first, recorded after: a crash between the two leaves it waiting.
	failpoint.Wait(env.Ctx, failpoint.TrustShown)
	if err := env.Ctx.Err(); err != nil {
		return err
	}
	step := decideTrust(was, c.Yes, c.DryRun, !env.Out.JSON && isTerminal(env.Stdin))
	switch step {
	case trustRefuse:
		return usagef("kandev trust %s asks before it lets these servers run, and stdin is not a terminal: read what is printed above, then run kandev trust %s --yes", s.ID, s.ID)
	case trustAsk:
		if !askTrust(env, s.ID) {
			return fmt.Errorf("%w: session %s: nothing changed; its MCP servers still wait (kandev trust %s to be asked again)", errNotTrusted, s.ID, s.ID)
		}
	}
	if step == trustAsk || step == trustRecord {
		if err := recordTrust(h, s.ID, shown); err != nil {
			return err
		}
	}
	trusted := step == trustAsk || step == trustRecord || step == trustNothingWaits
	env.Out.Object(trustOutput{SessionID: s.ID, Trusted: trusted, WasPending: was, MCPServers: servers}, func(w io.Writer) {
		switch step {
		case trustShowOnly:
			fmt.Fprintf(w, "dry run: nothing trusted (kandev trust %s to agree)\n", s.ID)
		case trustNothingWaits:
			fmt.Fprintf(w, "session %s waits for nothing: its setup runs here already\n", s.ID)
		default:
			fmt.Fprintf(w, "trusted: these MCP servers of session %s run on this machine from its next launch, with the values shown above\n", s.ID)
		}
	})
	return nil
}

// askTrust asks on the terminal whether the servers shown may run here.
func askTrust(env *Env, id string) bool {
	tty := openTTY()
	if tty == nil {
		return false
	}
	if c, ok := tty.(io.Closer); ok {
		defer c.Close()
	}
	fmt.Fprintf(tty, "Let these MCP servers of session %s run on this machine? [y/N] ", id)
	line, _ := bufio.NewReader(tty).ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes"
}

// recordTrust clears the session's pending trust, if its servers are still
// the ones shown.
func recordTrust(h *state.Home, id string, shown []state.MCPServer) error {
	_, err := h.UpdateSession(id, func(cur *state.Session) error {
		// Only what was shown is trusted: a pull that changed the servers meanwhile wins.
		if !slices.EqualFunc(cur.MCPConfig, shown, setup.SameMCPServer) {
			return fmt.Errorf("the MCP servers of session %s changed while they were shown (a pull?); nothing was trusted: run kandev trust %s again", id, id)
		}
		cur.TrustPending = false
		return nil
	})
	return err
}

// describeServer prints one server as kandev trust shows it: every value
// as it is written, so a value that is not a ${VAR} reference is read
// before it runs (BASH_ENV='$(...)' runs as surely as the command does).
func describeServer(w io.Writer, m trustedServer) {
	switch m.Type {
	case "http", "sse":
		fmt.Fprintf(w, "mcp %s: %s %s\n", printableLine(m.Name), m.Type, printableLine(m.URL))
		for _, k := range m.HeaderNames {
			fmt.Fprintf(w, "    header %s\n", printableLine(k+": "+m.Headers[k]))
		}
	default:
		var words []string
		for _, a := range append([]string{m.Command}, m.Args...) {
			words = append(words, shellQuote(a))
		}
		fmt.Fprintf(w, "mcp %s: runs %s\n", printableLine(m.Name), printableLine(strings.Join(words, " ")))
	}
	for _, k := range m.EnvNames {
		fmt.Fprintf(w, "    env %s\n", printableLine(k+"="+shellQuote(m.Env[k])))
	}
	if len(m.ReadsEnv) > 0 {
		fmt.Fprintf(w, "    given from this machine's environment: %s\n", printableLine(strings.Join(m.ReadsEnv, ", ")))
	}
}
