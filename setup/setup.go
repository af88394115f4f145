// Package setup decides the agent's setup of a session (its model, mode,
// config options and MCP servers) as pure functions of data: what a new
// session starts with (config defaults, flags over them), what a change
// makes of it, which MCP servers the agent is given at launch (references
// expanded from the environment there and only there), and, when a restored
// agent answers, what must be applied again and what it no longer offers.
//
// Guarantees: nothing this package returns for recording holds a literal
// secret (a value that looks like one is refused with advice to use a
// ${VAR} reference); Expand is the only place references are resolved, and
// its result is for the agent, never for the record.
package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// ErrBadSetup marks a setup kandev refuses: a malformed flag or file, an
// unknown [mcp.NAME], a literal secret. Commands map it to a usage error.
var ErrBadSetup = errors.New("bad setup")

// Error is a setup kandev refuses, saying what to fix.
type Error struct{ Msg string }

func (e *Error) Error() string        { return e.Msg }
func (e *Error) Is(target error) bool { return target == ErrBadSetup }

func bad(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// Change is what a command asks to change: set on start or fork, or by
// kandev set. Empty fields change nothing.
type Change struct {
	Model   string            `json:"model,omitempty"`
	Mode    string            `json:"mode,omitempty"`
	Options map[string]string `json:"options,omitempty"`
}

// Empty reports whether c changes nothing.
func (c Change) Empty() bool { return c.Model == "" && c.Mode == "" && len(c.Options) == 0 }

// Items is c one thing at a time: its mode, its model, then each option in
// key order, so that what a running agent refuses is told apart from what
// it takes.
func (c Change) Items() []Change {
	var out []Change
	if c.Mode != "" {
		out = append(out, Change{Mode: c.Mode})
	}
	if c.Model != "" {
		out = append(out, Change{Model: c.Model})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		out = append(out, Change{Options: map[string]string{k: c.Options[k]}})
	}
	return out
}

// ParseOptions reads repeated --set KEY=VALUE flags; a later KEY wins.
func ParseOptions(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || v == "" {
			return nil, bad("--set %q: write KEY=VALUE (e.g. --set effort=high)", kv)
		}
		if err := checkOption(k, v, "--set"); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// MaxMCPFileBytes bounds an --mcp file: its servers are recorded with the
// session, and a real one is a few kilobytes.
const MaxMCPFileBytes = 1 << 20

// mcpFile is the mcpServers shape of Claude Code's .mcp.json and Zed.
type mcpFile struct {
	MCPServers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"mcpServers"`
}

// ParseMCPFile reads a --mcp FILE: {"mcpServers": {"name": {"command",
// "args", "env"} | {"type": "http"|"sse", "url", "headers"}}}. Servers come
// out sorted by name; each is checked (Check).
func ParseMCPFile(path string, data []byte) ([]state.MCPServer, error) {
	var f mcpFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, bad("--mcp %s is not JSON in the mcpServers shape: %v", path, err)
	}
	if f.MCPServers == nil {
		return nil, bad(`--mcp %s has no "mcpServers" object`, path)
	}
	var out []state.MCPServer
	for _, name := range slices.Sorted(maps.Keys(f.MCPServers)) {
		s := f.MCPServers[name]
		srv := state.MCPServer{Name: name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers}
		if srv.Type == "stdio" {
			srv.Type = ""
		}
		if err := Check(srv, "--mcp "+path); err != nil {
			return nil, err
		}
		out = append(out, srv)
	}
	return out, nil
}

// Check refuses a server whose name is not a name (CheckName), that is incomplete or holds a literal secret; from
// says where it was written, for the error.
func Check(s state.MCPServer, from string) error {
	if err := CheckName(s.Name, from); err != nil {
		return err
	}
	where := fmt.Sprintf("%s: MCP server %q", from, s.Name)
	switch s.Type {
	case "":
		if s.Command == "" {
			return bad("%s has no command (a stdio server needs one; http and sse servers need \"type\" and \"url\")", where)
		}
	case "http", "sse":
		if s.URL == "" {
			return bad("%s of type %s has no url", where, s.Type)
		}
	default:
		return bad("%s has type %q: use stdio, http or sse", where, s.Type)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if literalUnder(SecretName(k), s.Env[k]) || looksSecret(k+"="+s.Env[k]) || looksSecret(s.Env[k]) {
			return bad("%s: env %s holds what looks like a secret; write a reference instead, e.g. %s = \"${%s}\", and set %s in the environment kandev runs in", where, k, k, k, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if literalUnder(SecretHeader(k), s.Headers[k]) || looksSecret(k+": "+s.Headers[k]) || looksSecret(s.Headers[k]) {
			return bad("%s: header %s holds what looks like a secret; write a reference instead (as its value: Bearer ${TOKEN}), and set TOKEN in the environment kandev runs in", where, k)
		}
	}
	if looksSecret(s.URL) || looksSecret(strings.Join(s.Args, " ")) || looksSecret(s.Command) {
		return bad("%s: its command, args or url hold what looks like a secret; pass it through env or headers as a ${VAR} reference", where)
	}
	return nil
}

// SecretName reports whether an environment variable's name says it holds
// a secret: *_PWD, *PASSWORD*, *PASSWD*, *PASSPHRASE*, *SECRET*, *TOKEN*,
// *API_KEY*, *APIKEY*, *CREDENTIAL*, *PRIVATE_KEY*, *AUTH_KEY*, in any
// case. A name that ends in _FILE, _PATH or _DIR names where a secret is,
// not the secret, and PWD alone is the working directory.
func SecretName(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if n == "PWD" || strings.HasSuffix(n, "_FILE") || strings.HasSuffix(n, "_PATH") || strings.HasSuffix(n, "_DIR") {
		return false
	}
	if strings.HasSuffix(n, "_PWD") {
		return true
	}
	for _, part := range []string{"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "API_KEY", "APIKEY", "CREDENTIAL", "PRIVATE_KEY", "AUTH_KEY"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// SecretHeader reports whether an HTTP header carries a credential:
// Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key,
// X-Auth-*, and any header whose name SecretName would flag
// (X-Access-Token, X-Vault-Token, ...).
func SecretHeader(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	switch n {
	case "AUTHORIZATION", "PROXY_AUTHORIZATION", "COOKIE", "SET_COOKIE", "X_API_KEY", "API_KEY":
		return true
	}
	return strings.HasPrefix(n, "X_AUTH") || strings.HasSuffix(n, "_AUTHORIZATION") || strings.HasSuffix(n, "_COOKIE") || SecretName(n)
}

// literalUnder reports a value written as a literal under a secret's name:
// such a value must be a ${VAR} reference ("Bearer ${TOKEN}" and
// "session=${COOKIE}" are), or empty, or a plain switch (true, false, on,
// off, yes, no, 0, 1).
func literalUnder(secretName bool, v string) bool {
	if !secretName {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "false", "on", "off", "yes", "no", "0", "1":
		return false
	}
	return !refPattern.MatchString(v)
}

// looksSecret uses the log's own redaction rules: what they would redact
// must not be written under the home (they leave ${VAR} references alone).
// An authorization scheme before a reference ("Bearer ${TOKEN}") is no secret.
func looksSecret(s string) bool {
	if refPattern.MatchString(s) {
		s = refPattern.ReplaceAllString(s, "")
		for _, scheme := range []string{"Bearer", "Basic", "Token", "Bot"} {
			s = strings.ReplaceAll(s, scheme+" ", "")
		}
	}
	return history.Redact(s) != s
}

// checkOption refuses a config option whose value looks like a secret:
// options are recorded with the session as they are.
func checkOption(k, v, from string) error {
	if looksSecret(k+"="+v) || looksSecret(v) {
		return bad("%s: option %s holds what looks like a secret; options are recorded with the session, so give the agent secrets through its environment ([agents.NAME] env) instead", from, k)
	}
	return nil
}

// Flags are a start's or fork's setup flags.
type Flags struct {
	Change
	MCP []state.MCPServer // from --mcp files, in order
}

// Initial is the setup a new session of agent starts with: [agents.NAME]
// model, mode, options and mcp (naming [mcp.NAME] tables), with the flags
// over them (a flag's model or mode replaces, its options and servers are
// added, a server of the same name replaces the config's). nil, nil when
// there is no setup at all.
func Initial(cfg *config.Config, agent string, f Flags) (*state.Setup, []state.MCPServer, error) {
	var def config.AgentSetupConfig
	if cfg != nil {
		def = cfg.Agents[agent].AgentSetupConfig
	}
	var servers []state.MCPServer
	for _, name := range def.MCP {
		srv, ok := state.MCPServer{}, false
		if cfg != nil {
			srv, ok = cfg.MCP[name]
		}
		if !ok {
			return nil, nil, bad("[agents.%s] mcp names %q, but the config has no [mcp.%s] table", agent, name, name)
		}
		srv.Name = name
		if err := Check(srv, "[mcp."+name+"]"); err != nil {
			return nil, nil, err
		}
		servers = append(servers, srv)
	}
	for _, srv := range f.MCP {
		servers = slices.DeleteFunc(servers, func(s state.MCPServer) bool { return s.Name == srv.Name })
		servers = append(servers, srv)
	}
	for _, k := range slices.Sorted(maps.Keys(def.Options)) {
		if err := checkOption(k, def.Options[k], "[agents."+agent+"] options"); err != nil {
			return nil, nil, err
		}
	}
	s := Apply(&state.Setup{Model: def.Model, Mode: def.Mode, Options: maps.Clone(def.Options)}, f.Change)
	s = WithServers(s, servers)
	if s == nil {
		return nil, nil, nil
	}
	return s, servers, nil
}

// Apply is rec with c applied: a model or mode replaces, options are set
// key by key. rec is not changed; nil stays nil when c is empty.
func Apply(rec *state.Setup, c Change) *state.Setup {
	var out state.Setup
	if rec != nil {
		out = *rec
		out.Options = maps.Clone(rec.Options)
		out.MCPServers = slices.Clone(rec.MCPServers)
	}
	if c.Model != "" {
		out.Model = c.Model
	}
	if c.Mode != "" {
		out.Mode = c.Mode
	}
	for k, v := range c.Options {
		if out.Options == nil {
			out.Options = map[string]string{}
		}
		out.Options[k] = v
	}
	return orNil(&out)
}

// WithServers is s naming servers (in order).
func WithServers(s *state.Setup, servers []state.MCPServer) *state.Setup {
	var out state.Setup
	if s != nil {
		out = *s
	}
	out.MCPServers = nil
	for _, srv := range servers {
		out.MCPServers = append(out.MCPServers, srv.Name)
	}
	return orNil(&out)
}

func orNil(s *state.Setup) *state.Setup {
	if s.Model == "" && s.Mode == "" && len(s.Options) == 0 && len(s.MCPServers) == 0 {
		return nil
	}
	return s
}

// Equal reports whether two setups are the same (nil is the empty setup).
func Equal(a, b *state.Setup) bool { return SetupsEqual(a, b) }

// Describe is a setup in one line: "model M, mode X, options k=v, MCP a, b",
// or "the agent's defaults".
func Describe(s *state.Setup) string { return DescribeSetup(s) }

// TurnSetupDiffers says why an interrupted turn's continuation must wait
// for an operator: the turn ran under turn, a restore would use now. ""
// when they are the same, or when the turn's setup was never recorded (nil:
// a record of an older format, nothing to compare; a turn that ran under
// the agent's defaults records an empty setup).
func TurnSetupDiffers(turn, now *state.Setup) string { return SetupDiffers(turn, now) }
