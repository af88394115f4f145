package config

import "fmt"

// LimitsConfig is [limits]: how unattended work treats the agent's usage
// window (docs/unattended.md).
type LimitsConfig struct {
	// PauseAtPercent: a turn nobody follows that would start with the
	// window used at or above it waits for the reset (nil: DefaultPauseAtPercent;
	// 100: off).
	PauseAtPercent *float64 `toml:"pause_at_percent"`
	// AfterResetTurns and AfterResetUSD bound unattended continuation after
	// a reset before it waits for a person (0: no bound).
	AfterResetTurns int     `toml:"after_reset_turns"`
	AfterResetUSD   float64 `toml:"after_reset_usd"`
}

// DefaultPauseAtPercent is [limits] pause_at_percent's default.
const DefaultPauseAtPercent = 95

// PauseAtPercent is [limits] pause_at_percent (100: off).
func (c *Config) PauseAtPercent() float64 {
	if c == nil || c.Limits.PauseAtPercent == nil {
		return DefaultPauseAtPercent
	}
	return *c.Limits.PauseAtPercent
}

// validate checks [limits].
func (l LimitsConfig) validate() error {
	if p := l.PauseAtPercent; p != nil && (*p <= 0 || *p > 100) {
		return fmt.Errorf("[limits] pause_at_percent = %v is outside 1..100 (100 turns it off)", *p)
	}
	if l.AfterResetTurns < 0 {
		return fmt.Errorf("[limits] after_reset_turns = %d is negative (0: no bound)", l.AfterResetTurns)
	}
	if l.AfterResetUSD < 0 {
		return fmt.Errorf("[limits] after_reset_usd = %v is negative (0: no bound)", l.AfterResetUSD)
	}
	return nil
}
