package commands

import (
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
}

// Help shows an example.
func (c *trustCmd) Help() string {
	return "MCP servers a pull brought run only once this machine agrees: trust prints each\n" +
		"server's command, arguments and the names of the variables it gets, then records\n" +
		"here (never on the remote) that they may run.\n\nExample:\n  kandev trust 20261130-0915"
}

// trustedServer is what kandev trust shows of one MCP server: what runs and
// which variables of this machine's environment it is given, never a value.
type trustedServer struct {
	Name        string   `json:"name"`
	Type        string   `json:"type,omitempty"`
	Command     string   `json:"command,omitempty"`
	Args        []string `json:"args,omitempty"`
	EnvNames    []string `json:"env_names,omitempty"`
	URL         string   `json:"url,omitempty"`
	HeaderNames []string `json:"header_names,omitempty"`
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

// Run shows the session's MCP servers, then records that this machine trusts them.
func (c *trustCmd) Run(env *Env) error {
	h, s, err := c.load(env, needAny)
	if err != nil {
		return err
	}
	shown := s.MCPConfig
	servers := []trustedServer{}
	for _, m := range shown {
		servers = append(servers, trustedServer{Name: m.Name, Type: m.Type, Command: m.Command, Args: m.Args,
			EnvNames: slices.Sorted(maps.Keys(m.Env)), URL: m.URL, HeaderNames: slices.Sorted(maps.Keys(m.Headers)), ReadsEnv: readsEnv(m)})
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
	if was {
		if _, err := h.UpdateSession(s.ID, func(cur *state.Session) error {
			// Only what was shown is trusted: a pull that changed the servers meanwhile wins.
			if !slices.EqualFunc(cur.MCPConfig, shown, setup.SameMCPServer) {
				return fmt.Errorf("the MCP servers of session %s changed while they were shown (a pull?); nothing was trusted: run kandev trust %s again", s.ID, s.ID)
			}
			cur.TrustPending = false
			return nil
		}); err != nil {
			return err
		}
	}
	env.Out.Object(trustOutput{SessionID: s.ID, Trusted: true, WasPending: was, MCPServers: servers}, func(w io.Writer) {
		switch {
		case was:
			fmt.Fprintf(w, "trusted: these MCP servers of session %s run on this machine from its next launch, with the variables named above\n", s.ID)
		default:
			fmt.Fprintf(w, "session %s waits for nothing: its setup runs here already\n", s.ID)
		}
	})
	return nil
}

// describeServer prints one server as kandev trust shows it.
func describeServer(w io.Writer, m trustedServer) {
	switch m.Type {
	case "http", "sse":
		fmt.Fprintf(w, "mcp %s: %s %s\n", printableLine(m.Name), m.Type, printableLine(m.URL))
		if len(m.HeaderNames) > 0 {
			fmt.Fprintf(w, "    headers: %s\n", printableLine(strings.Join(m.HeaderNames, ", ")))
		}
	default:
		var words []string
		for _, a := range append([]string{m.Command}, m.Args...) {
			words = append(words, shellQuote(a))
		}
		fmt.Fprintf(w, "mcp %s: runs %s\n", printableLine(m.Name), printableLine(strings.Join(words, " ")))
	}
	if len(m.EnvNames) > 0 {
		fmt.Fprintf(w, "    env: %s\n", printableLine(strings.Join(m.EnvNames, ", ")))
	}
	if len(m.ReadsEnv) > 0 {
		fmt.Fprintf(w, "    given from this machine's environment: %s\n", printableLine(strings.Join(m.ReadsEnv, ", ")))
	}
}
