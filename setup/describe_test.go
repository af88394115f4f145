package setup

import (
	"testing"

	"github.com/kandev/kandev/state"
)

func TestTurnSetupOf_NeverNilAndACopy(t *testing.T) {
	if s := TurnSetupOf(nil); s == nil || !SetupsEqual(s, nil) {
		t.Fatalf("TurnSetupOf(nil) = %+v", s)
	}
	src := &state.Setup{Mode: "code", Options: map[string]string{"k": "v"}, MCPServers: []string{"a"}}
	c := TurnSetupOf(src)
	src.Options["k"], src.MCPServers[0] = "w", "b"
	if c.Options["k"] != "v" || c.MCPServers[0] != "a" {
		t.Fatalf("TurnSetupOf shares its maps: %+v", c)
	}
	if got := DescribeSetup(&state.Setup{Model: "m", Mode: "code", Options: map[string]string{"b": "2", "a": "1"}, MCPServers: []string{"x", "y"}}); got != "model m, mode code, options a=1 b=2, MCP x, y" {
		t.Fatalf("DescribeSetup = %q", got)
	}
}
