package state

import (
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
)

// Config is $KANDEV_HOME/config.toml (SPEC section 7). Flags win over it.
type Config struct {
	DefaultAgent string                  `toml:"default_agent"`
	Permissions  PermissionsConfig       `toml:"permissions"`
	Session      SessionConfig           `toml:"session"`
	Agent        AgentTimeouts           `toml:"agent"`
	Agents       map[string]AgentProfile `toml:"agents"`
}

// PermissionsConfig is [permissions].
type PermissionsConfig struct {
	Mode string `toml:"mode"`
}

// SessionConfig is [session].
type SessionConfig struct {
	Restart RestartConfig `toml:"restart"`
	Derive  DeriveConfig  `toml:"derive"`
	Attach  AttachConfig  `toml:"attach"`
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
}

// Defaults of SPEC section 7.
const (
	DefaultMaxAttempts    = 3
	DefaultWindowSeconds  = 300
	DefaultMaxReplayBytes = 131072
	DefaultTTLSeconds     = 900
	MaxTTLSeconds         = 86400
)

// LoadConfig reads the config at path; a missing file is an empty config.
func LoadConfig(path string) (*Config, error) {
	c := &Config{}
	_, err := toml.DecodeFile(path, c)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
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
