package state

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadConfig_AgentSetupAndMCPTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`
[agents.claude]
model = "sonnet"
mode = "plan"
options = { effort = "high" }
mcp = ["notes", "web"]

[mcp.notes]
command = "notes-mcp"
args = ["--dir", "/n"]
env = { NOTES_TOKEN = "${NOTES_TOKEN}" }

[mcp.web]
type = "http"
url = "https://mcp.example.com"
headers = { Authorization = "Bearer ${WEB_TOKEN}" }
`), 0o600)
	c, err := LoadConfig(path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := AgentSetupConfig{Model: "sonnet", Mode: "plan", Options: map[string]string{"effort": "high"}, MCP: []string{"notes", "web"}}
	if got := c.Agents["claude"].AgentSetupConfig; !reflect.DeepEqual(got, want) {
		t.Fatalf("[agents.claude] setup = %+v", got)
	}
	if n := c.MCP["notes"]; n.Command != "notes-mcp" || n.Env["NOTES_TOKEN"] != "${NOTES_TOKEN}" || len(n.Args) != 2 {
		t.Fatalf("[mcp.notes] = %+v", n)
	}
	if w := c.MCP["web"]; w.Type != "http" || w.Headers["Authorization"] != "Bearer ${WEB_TOKEN}" {
		t.Fatalf("[mcp.web] = %+v", w)
	}

	os.WriteFile(path, []byte("[mcp.notes]\ncomand = \"x\"\n"), 0o600)
	if _, err := LoadConfig(path, true); err == nil || !strings.Contains(err.Error(), "mcp.notes.comand") {
		t.Fatalf("a misspelt [mcp.NAME] key: %v", err)
	}
}

func TestTurnSetupOf_NeverNilAndACopy(t *testing.T) {
	if s := TurnSetupOf(nil); s == nil || !SetupsEqual(s, nil) {
		t.Fatalf("TurnSetupOf(nil) = %+v", s)
	}
	src := &Setup{Mode: "code", Options: map[string]string{"k": "v"}, MCPServers: []string{"a"}}
	c := TurnSetupOf(src)
	src.Options["k"], src.MCPServers[0] = "w", "b"
	if c.Options["k"] != "v" || c.MCPServers[0] != "a" {
		t.Fatalf("TurnSetupOf shares its maps: %+v", c)
	}
	if got := DescribeSetup(&Setup{Model: "m", Mode: "code", Options: map[string]string{"b": "2", "a": "1"}, MCPServers: []string{"x", "y"}}); got != "model m, mode code, options a=1 b=2, MCP x, y" {
		t.Fatalf("DescribeSetup = %q", got)
	}
}
