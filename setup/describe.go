package setup

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kandev/kandev/state"
)

// SetupsEqual reports whether two setups are the same (nil is the empty setup).
func SetupsEqual(a, b *state.Setup) bool {
	var x, y state.Setup
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
func DescribeSetup(s *state.Setup) string {
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
func SetupDiffers(turn, now *state.Setup) string {
	if turn == nil || SetupsEqual(turn, now) {
		return ""
	}
	return fmt.Sprintf("the turn ran under %s, the session's setup now is %s", DescribeSetup(turn), DescribeSetup(now))
}

// TurnSetupOf is what a turn records of the setup it runs under: never
// nil, so that "not recorded" stays distinct from "the defaults".
func TurnSetupOf(s *state.Setup) *state.Setup {
	if s == nil {
		return &state.Setup{}
	}
	c := *s
	c.Options = maps.Clone(s.Options)
	c.MCPServers = slices.Clone(s.MCPServers)
	return &c
}
