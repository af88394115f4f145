// Package config reads $KANDEV_HOME/config.toml: the settings and agent profiles
// that flags override (see docs/configuration.md).
package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/kandev/kandev/state"
)

// Config is $KANDEV_HOME/config.toml (see docs/configuration.md). Flags win over it.
type Config struct {
	DefaultAgent string                  `toml:"default_agent"`
	Permissions  PermissionsConfig       `toml:"permissions"`
	Session      SessionConfig           `toml:"session"`
	Agent        AgentTimeouts           `toml:"agent"`
	Agents       map[string]AgentProfile `toml:"agents"`
	// MCP are the [mcp.NAME] servers an agent's setup can name (state/setup.go).
	MCP    map[string]state.MCPServer `toml:"mcp"`
	Notify NotifyConfig               `toml:"notify"`
	Sync   SyncConfig                 `toml:"sync"`
	// Runtime is [runtime]: the container engine for agents whose runtime
	// is "container" (docs/containers.md).
	Runtime RuntimeConfig `toml:"runtime"`
	// Limits is [limits]: the agent's usage window and unattended work.
	Limits LimitsConfig `toml:"limits"`
}

// RuntimeConfig is [runtime]: how an agent runs in a container.
type RuntimeConfig struct {
	// Engine is the engine's CLI (default: podman, else docker, on PATH).
	Engine string `toml:"engine"`
	// Image is the container image; Rootfs a root filesystem directory used
	// instead (default: "/", the host's own root as an overlay).
	Image  string `toml:"image"`
	Rootfs string `toml:"rootfs"`
	// Mounts are host paths mounted besides the session's cwd ("SRC[:DST[:ro]]").
	Mounts []string `toml:"mounts"`
	// Network is the container's network (default "host").
	Network string `toml:"network"`
}

// NotifyConfig is [notify]: how kandev tells a person a session needs them.
type NotifyConfig struct {
	// Command runs (detached, JSON on stdin) when a session needs a person.
	Command []string `toml:"command"`
	// AfterSeconds: a turn longer than this in a terminal ends with a
	// terminal notification (default 30; negative: never).
	AfterSeconds int `toml:"after_seconds"`
	// TimeoutSeconds bounds the command (default 10).
	TimeoutSeconds int `toml:"timeout_seconds"`
}

// PermissionsConfig is [permissions].
type PermissionsConfig struct {
	Mode string `toml:"mode"`
	// DeferTimeoutSeconds is how long a deferred request waits for
	// kandev approve or deny before it is denied (default 3600).
	DeferTimeoutSeconds int `toml:"defer_timeout_seconds"`
}

// SessionConfig is [session].
type SessionConfig struct {
	Restart RestartConfig `toml:"restart"`
	Derive  DeriveConfig  `toml:"derive"`
	Attach  AttachConfig  `toml:"attach"`
	// MaxCost caps a session's spending, in the agent's currency (0: none).
	MaxCost float64 `toml:"max_cost"`
	// LingerSeconds keeps an owner and its idle agent alive after its last
	// turn, so the next prompt is served warm (nil: DefaultLinger).
	LingerSeconds *int `toml:"linger_seconds"`
	// MaxWarm bounds the owners that linger in one home (0: DefaultMaxWarm).
	MaxWarm int `toml:"max_warm"`
	// ResumeAfterLimit asks the operating system to run kandev recover at
	// the reset time of a usage limit that ended a turn.
	ResumeAfterLimit bool `toml:"resume_after_limit"`
}

// RestartConfig is [session.restart]: the automatic continuation budget.
type RestartConfig struct {
	AutoContinue  *bool `toml:"auto_continue"`
	MaxAttempts   int   `toml:"max_attempts"`
	WindowSeconds int   `toml:"window_seconds"`
}

// DeriveConfig is [session.derive]: the resume context bound.
type DeriveConfig struct {
	MaxReplayBytes int `toml:"max_replay_bytes"`
}

// AttachConfig is [session.attach].
type AttachConfig struct {
	DefaultTTLSeconds int `toml:"default_ttl_seconds"`
}

// AgentTimeouts is [agent]: how long kandev waits for an agent.
type AgentTimeouts struct {
	// HandshakeTimeoutSeconds bounds initialize and session setup (default 60).
	HandshakeTimeoutSeconds int `toml:"handshake_timeout_seconds"`
	// IdleTimeoutSeconds bounds a turn with no message at all from the agent (default 600).
	IdleTimeoutSeconds int `toml:"idle_timeout_seconds"`
	// CancelGraceSeconds is how long a cancelled turn may take to end before the agent is killed (default 5).
	CancelGraceSeconds int `toml:"cancel_grace_seconds"`
}

// AgentProfile is [agents.NAME]: a custom agent or an override of a built-in one.
type AgentProfile struct {
	Command          []string          `toml:"command" json:"command"`
	Env              map[string]string `toml:"env" json:"env,omitempty"`
	NativeResume     *bool             `toml:"native_resume" json:"native_resume,omitempty"`
	HistoryInjection *bool             `toml:"history_injection" json:"history_injection,omitempty"`
	ResumeFlag       []string          `toml:"resume_flag" json:"resume_flag,omitempty"`
	InstallHint      string            `toml:"install_hint" json:"install_hint,omitempty"`
	LingerSeconds    *int              `toml:"linger_seconds" json:"linger_seconds,omitempty"`
	// Runtime "container" runs the agent in a container ([runtime]); "" or
	// "process" runs it as a local process.
	Runtime string `toml:"runtime" json:"runtime,omitempty"`
	// ExitOnEOF false says the agent ignores its stdin closing: it is
	// signalled at once when it is shut down (nil: the profile's).
	ExitOnEOF        *bool `toml:"exit_on_eof" json:"exit_on_eof,omitempty"`
	AgentSetupConfig       // model, mode, options, mcp (package setup applies them)
}

// AgentSetupConfig is the setup part of [agents.NAME]: the defaults of a
// new session of that agent (flags win over them).
type AgentSetupConfig struct {
	Model   string            `toml:"model" json:"model,omitempty"`
	Mode    string            `toml:"mode" json:"mode,omitempty"`
	Options map[string]string `toml:"options" json:"options,omitempty"`
	// MCP names [mcp.NAME] tables whose servers the agent is given.
	MCP []string `toml:"mcp" json:"mcp,omitempty"`
}

// Defaults, as docs/configuration.md gives them.
const (
	DefaultMaxAttempts    = 3
	DefaultWindowSeconds  = 300
	DefaultMaxReplayBytes = 131072
	// MinReplayBytes is the least max_replay_bytes a config may set.
	MinReplayBytes      = 1024
	DefaultDeferTimeout = 3600
	// MaxLingerSeconds bounds a linger (a day, like a lease).
	MaxLingerSeconds = 86400
	// DefaultLingerSeconds is how long an owner stays warm unless told
	// otherwise (none under CI, DefaultLinger).
	DefaultLingerSeconds = 300
	// DefaultMaxWarm is how many owners may linger in one home at once.
	DefaultMaxWarm = 4
)

// ErrConfig marks a config file kandev cannot use (see ConfigError).
var ErrConfig = errors.New("bad config")

// ConfigError is a config file kandev cannot use: unreadable, not TOML, an
// unknown key, a value out of range, or a --config file that is missing.
type ConfigError struct {
	Path    string
	Problem string
}

func (e *ConfigError) Error() string        { return "config " + e.Path + ": " + e.Problem }
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// LoadConfig reads the config at path. A missing file is an empty config,
// unless explicit (the user named it with --config). Keys kandev does not
// know are errors, not silently ignored: a misspelt key must not quietly
// leave the default in force.
func LoadConfig(path string, explicit bool) (*Config, error) {
	c := &Config{}
	md, err := toml.DecodeFile(path, c)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicit:
		return c, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, &ConfigError{path, "no such file (check --config)"}
	case err != nil:
		return nil, &ConfigError{path, err.Error()}
	}
	if keys := unknownKeys(md.Undecoded()); len(keys) > 0 {
		return nil, &ConfigError{path, fmt.Sprintf("unknown key%s %s (check the spelling, or remove it)", map[bool]string{true: "s"}[len(keys) > 1], strings.Join(keys, ", "))}
	}
	if err := c.validate(md.IsDefined); err != nil {
		return nil, &ConfigError{path, err.Error()}
	}
	return c, nil
}

// unknownKeys names each unknown key once: a misspelt table, not also every key in it.
func unknownKeys(keys []toml.Key) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		name := k.String()
		if len(k) > 1 && seen[toml.Key(k[:len(k)-1]).String()] {
			seen[name] = true
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// validate checks values against their limits. defined says whether the
// file sets a key: a value written out that kandev would silently replace
// by its default (max_attempts = 0, max_replay_bytes = 0) is refused, so
// the file never says something kandev does not do.
func (c *Config) validate(defined func(key ...string) bool) error {
	atLeast := []struct {
		key   []string
		value int
		min   int
		hint  string
	}{
		{[]string{"session", "restart", "max_attempts"}, c.Session.Restart.MaxAttempts, 1, " (to turn automatic continuation off, set auto_continue = false)"},
		{[]string{"session", "restart", "window_seconds"}, c.Session.Restart.WindowSeconds, 1, ""},
		{[]string{"session", "derive", "max_replay_bytes"}, c.Session.Derive.MaxReplayBytes, MinReplayBytes, " (the resume context needs room for the request and its frame)"},
		{[]string{"permissions", "defer_timeout_seconds"}, c.Permissions.DeferTimeoutSeconds, 1, ""},
		{[]string{"agent", "handshake_timeout_seconds"}, c.Agent.HandshakeTimeoutSeconds, 1, ""},
		{[]string{"agent", "idle_timeout_seconds"}, c.Agent.IdleTimeoutSeconds, 1, ""},
		{[]string{"agent", "cancel_grace_seconds"}, c.Agent.CancelGraceSeconds, 1, ""},
		{[]string{"sync", "timeout_seconds"}, c.Sync.TimeoutSeconds, 1, ""},
		{[]string{"sync", "max_pull_bytes"}, c.Sync.MaxPullBytes, 1, ""},
	}
	for _, k := range atLeast {
		if defined(k.key...) && k.value < k.min {
			n := len(k.key) - 1
			return fmt.Errorf("[%s] %s = %d must be at least %d%s; leave it out for the default", strings.Join(k.key[:n], "."), k.key[n], k.value, k.min, k.hint)
		}
	}
	for _, name := range sortedKeys(c.Agents) {
		if a := c.Agents[name]; defined("agents", name, "command") && (len(a.Command) == 0 || strings.TrimSpace(a.Command[0]) == "") {
			return fmt.Errorf("[agents.%s] command = %s names no program: give the program and its arguments, e.g. command = [\"my-agent\", \"--acp\"]", name, tomlList(a.Command))
		}
	}
	if ttl := c.Session.Attach.DefaultTTLSeconds; ttl > state.MaxTTLSeconds {
		return fmt.Errorf("[session.attach] default_ttl_seconds = %d is over the limit of %d", ttl, state.MaxTTLSeconds)
	}
	if t := c.Sync.TimeoutSeconds; t > state.MaxTTLSeconds {
		return fmt.Errorf("[sync] timeout_seconds = %d is over the limit of %d", t, state.MaxTTLSeconds)
	}
	if ttl := c.Sync.ClaimTTLSeconds; ttl > state.MaxTTLSeconds {
		return fmt.Errorf("[sync] claim_ttl_seconds = %d is over the limit of %d", ttl, state.MaxTTLSeconds)
	}
	if c.Session.MaxCost < 0 {
		return fmt.Errorf("[session] max_cost = %v is negative (leave it out for no cap)", c.Session.MaxCost)
	}
	if l := c.Session.LingerSeconds; l != nil && (*l < 0 || *l > MaxLingerSeconds) {
		return fmt.Errorf("[session] linger_seconds = %d is outside 0..%d", *l, MaxLingerSeconds)
	}
	if c.Session.MaxWarm < 0 {
		return fmt.Errorf("[session] max_warm = %d is negative; leave it out for the default (%d)", c.Session.MaxWarm, DefaultMaxWarm)
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.Agents) {
		if a := c.Agents[name]; a.LingerSeconds != nil && (*a.LingerSeconds < 0 || *a.LingerSeconds > MaxLingerSeconds) {
			return fmt.Errorf("[agents.%s] linger_seconds = %d is outside 0..%d", name, *a.LingerSeconds, MaxLingerSeconds)
		}
	}
	return nil
}

// sortedKeys are the agent names in order, so the first problem reported is
// the same on every run.
func sortedKeys(m map[string]AgentProfile) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tomlList writes a list of strings as TOML would.
func tomlList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// AutoContinue is [session.restart] auto_continue, true by default.
func (c *Config) AutoContinue() bool {
	return c.Session.Restart.AutoContinue == nil || *c.Session.Restart.AutoContinue
}

// MaxAttempts is the continuation budget within the window.
func (c *Config) MaxAttempts() int {
	return orDefault(c.Session.Restart.MaxAttempts, DefaultMaxAttempts)
}

// WindowSeconds is the budget window.
func (c *Config) WindowSeconds() int {
	return orDefault(c.Session.Restart.WindowSeconds, DefaultWindowSeconds)
}

// MaxReplayBytes bounds the resume context.
func (c *Config) MaxReplayBytes() int {
	return orDefault(c.Session.Derive.MaxReplayBytes, DefaultMaxReplayBytes)
}

// DeferTimeoutSeconds bounds how long a deferred permission request waits.
func (c *Config) DeferTimeoutSeconds() int {
	return orDefault(c.Permissions.DeferTimeoutSeconds, DefaultDeferTimeout)
}

// LingerSeconds is how long an owner of agent's sessions stays warm after
// its last turn: the agent's own setting, else [session] linger_seconds,
// else the default for the environment (DefaultLinger of $CI).
func (c *Config) LingerSeconds(agent string) int {
	if a, ok := c.Agents[agent]; ok && a.LingerSeconds != nil {
		return *a.LingerSeconds
	}
	if c.Session.LingerSeconds != nil {
		return *c.Session.LingerSeconds
	}
	return DefaultLinger(os.Getenv("CI"))
}

// DefaultLinger is the linger nothing configured: DefaultLingerSeconds for
// a person, 0 when the environment variable CI is set and not empty (a CI
// job leaves no agent behind).
func DefaultLinger(ci string) int {
	if ci != "" {
		return 0
	}
	return DefaultLingerSeconds
}

// MaxWarm is [session] max_warm: how many owners may linger in one home.
func (c *Config) MaxWarm() int { return orDefault(c.Session.MaxWarm, DefaultMaxWarm) }

// HandshakeTimeoutSeconds bounds agent start-up requests.
func (c *Config) HandshakeTimeoutSeconds() int { return orDefault(c.Agent.HandshakeTimeoutSeconds, 60) }

// IdleTimeoutSeconds bounds agent silence during a turn.
func (c *Config) IdleTimeoutSeconds() int { return orDefault(c.Agent.IdleTimeoutSeconds, 600) }

// CancelGraceSeconds bounds the wait after session/cancel.
func (c *Config) CancelGraceSeconds() int { return orDefault(c.Agent.CancelGraceSeconds, 5) }

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// SyncConfig is [sync]: sessions that move between machines through a git
// remote (package remote).
type SyncConfig struct {
	// Remote is the remote of the session's repository to use (default origin).
	Remote string `toml:"remote"`
	// Auto pushes a session after every turn and after a SIGTERM.
	Auto bool `toml:"auto"`
	// ClaimTTLSeconds is how long a machine's claim on a session lasts
	// unless renewed (default 900).
	ClaimTTLSeconds int `toml:"claim_ttl_seconds"`
	// TimeoutSeconds bounds each conversation with the remote (a fetch, a
	// push, a claim): one that stops answering is given up (default 30).
	TimeoutSeconds int `toml:"timeout_seconds"`
	// MaxPullBytes bounds what one pull appends to a session's log
	// (default 256 MiB): whoever can push to the remote chooses its size.
	MaxPullBytes int `toml:"max_pull_bytes"`
}

// DefaultMaxPullBytes is [sync] max_pull_bytes when unset.
const DefaultMaxPullBytes = 256 << 20

// MaxPullBytes is [sync] max_pull_bytes, 256 MiB by default.
func (c *Config) MaxPullBytes() int64 {
	return int64(orDefault(c.Sync.MaxPullBytes, DefaultMaxPullBytes))
}

// DefaultSyncTimeoutSeconds is [sync] timeout_seconds when unset.
const DefaultSyncTimeoutSeconds = 30

// SyncTimeout is [sync] timeout_seconds, 30 s by default.
func (c *Config) SyncTimeout() time.Duration {
	return time.Duration(orDefault(c.Sync.TimeoutSeconds, DefaultSyncTimeoutSeconds)) * time.Second
}

// ClaimTTLSeconds is [sync] claim_ttl_seconds, 900 by default.
func (c *Config) ClaimTTLSeconds() int {
	return orDefault(c.Sync.ClaimTTLSeconds, state.DefaultTTLSeconds)
}

// RuntimeContainer is the runtime of an agent run in a container.
const RuntimeContainer = "container"
