package setup

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kandev/kandev/state"
)

// ErrTrustPending marks a session whose MCP servers came from another
// machine and wait for this machine's kandev trust (exit 3).
var ErrTrustPending = errors.New("waits for trust")

// TrustPendingError says which session waits and how to agree to it.
type TrustPendingError struct {
	ID      string
	Servers []string // their names
}

func (e *TrustPendingError) Error() string {
	return fmt.Sprintf("session %s came from another machine with MCP servers (%s) that this machine has not agreed to run: see and trust them with kandev trust %s, or replace them with kandev set %s --mcp FILE", e.ID, strings.Join(e.Servers, ", "), e.ID, e.ID)
}

// Is makes errors.Is(err, ErrTrustPending) true.
func (e *TrustPendingError) Is(target error) bool { return target == ErrTrustPending }

// CheckTrust is nil unless s waits for trust.
func CheckTrust(s *state.Session) error {
	if s == nil || !s.TrustPending {
		return nil
	}
	var names []string
	for _, m := range s.MCPConfig {
		names = append(names, m.Name)
	}
	return &TrustPendingError{ID: s.ID, Servers: names}
}

// PulledTrust decides whether a pulled record's MCP servers wait for trust:
// not when it has none, nor when this machine already holds the session
// with the same servers and trusts them (local: its record before the
// pull, nil when it had none). Everything else a remote brings waits.
func PulledTrust(local *state.Session, pulled []state.MCPServer) (pending bool) {
	if len(pulled) == 0 {
		return false
	}
	if local == nil || local.TrustPending {
		return true
	}
	return !slices.EqualFunc(local.MCPConfig, pulled, SameMCPServer)
}

// SameMCPServer reports whether a and b are the same server, field by field.
func SameMCPServer(a, b state.MCPServer) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.URL == b.URL && maps.Equal(a.Headers, b.Headers)
}
