package state

// The agent's setup as the session records it (see docs/configuration.md): what the agent is
// set up with survives every restore. The policy (parsing, merging, what to
// apply again) lives in package setup; this is the data.

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
