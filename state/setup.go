package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The agent's setup as the session records it (see docs/configuration.md): what the agent is
// set up with survives every restore. The policy (parsing, merging, what to
// apply again) lives in package setup; this is the data.

// EventSetupChanged is logged when the session's setup changes: set on
// start or fork, by kandev set, or reported by the agent itself.
const EventSetupChanged = "setup_changed"

// InputSet is an inbox input that changes a live owner's agent setup; its
// Text is the change as JSON (a Setup of the fields to change).
const InputSet = "set"

// PauseSetupChanged: the interrupted turn ran under another setup than the
// one a restore would use.
const PauseSetupChanged = "setup_changed"

// Setup is the agent's model, mode, config options and the names of its
// MCP servers: what status and list show. Empty fields are the agent's own
// default.
type Setup struct {
	Model   string            `json:"model,omitempty"`
	Mode    string            `json:"mode,omitempty"`
	Options map[string]string `json:"options,omitempty"`
	// MCPServers names the servers of the record's mcp_config, in order.
	MCPServers []string `json:"mcp_servers,omitempty"`
}

// MCPServer is one MCP server passed to the agent: stdio (Command, Args,
// Env) or http/sse (URL, Headers). Env and header values keep ${VAR}
// references as written; they are expanded only when the agent is launched.
// It is also the shape of a config's [mcp.NAME] table (the name is the key).
type MCPServer struct {
	Name    string            `json:"name" toml:"-"`
	Type    string            `json:"type,omitempty" toml:"type"` // "" (stdio), "http" or "sse"
	Command string            `json:"command,omitempty" toml:"command"`
	Args    []string          `json:"args,omitempty" toml:"args"`
	Env     map[string]string `json:"env,omitempty" toml:"env"`
	URL     string            `json:"url,omitempty" toml:"url"`
	Headers map[string]string `json:"headers,omitempty" toml:"headers"`
}

// SetupsEqual reports whether two setups are the same (nil is the empty setup).
func SetupsEqual(a, b *Setup) bool {
	var x, y Setup
	if a != nil {
		x = *a
	}
	if b != nil {
		y = *b
	}
	return x.Model == y.Model && x.Mode == y.Mode && maps.Equal(x.Options, y.Options) && slices.Equal(x.MCPServers, y.MCPServers)
}

// DescribeSetup is a setup in one line: "model M, mode X, options k=v, MCP
// a, b", or "the agent's defaults".
func DescribeSetup(s *Setup) string {
	var parts []string
	if s != nil && s.Model != "" {
		parts = append(parts, "model "+s.Model)
	}
	if s != nil && s.Mode != "" {
		parts = append(parts, "mode "+s.Mode)
	}
	if s != nil && len(s.Options) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.Options)) {
			kv = append(kv, k+"="+s.Options[k])
		}
		parts = append(parts, "options "+strings.Join(kv, " "))
	}
	if s != nil && len(s.MCPServers) > 0 {
		parts = append(parts, "MCP "+strings.Join(s.MCPServers, ", "))
	}
	if len(parts) == 0 {
		return "the agent's defaults"
	}
	return strings.Join(parts, ", ")
}

// SetupDiffers says how the setup an interrupted turn ran under (turn)
// differs from the one a restore would use (now): "" when they are the
// same, or when the turn's setup was never recorded (nil: a record of an
// older format; a turn under the agent's defaults records an empty one).
func SetupDiffers(turn, now *Setup) string {
	if turn == nil || SetupsEqual(turn, now) {
		return ""
	}
	return fmt.Sprintf("the turn ran under %s, the session's setup now is %s", DescribeSetup(turn), DescribeSetup(now))
}

// TurnSetupOf is what a turn records of the setup it runs under: never
// nil, so that "not recorded" stays distinct from "the defaults".
func TurnSetupOf(s *Setup) *Setup {
	if s == nil {
		return &Setup{}
	}
	c := *s
	c.Options = maps.Clone(s.Options)
	c.MCPServers = slices.Clone(s.MCPServers)
	return &c
}
