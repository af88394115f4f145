package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadConfig_RefusesWhatItCannotUse(t *testing.T) {
	cases := []struct {
		name     string
		toml     string // "" with write false: no file
		write    bool
		explicit bool
		wantErr  string // "" = loads
	}{
		{"missing default file is the empty config", "", false, false, ""},
		{"missing --config file is an error", "", false, true, "no such file (check --config)"},
		{"known keys load", "default_agent = \"demo\"\n[session.attach]\ndefault_ttl_seconds = 86400\n[agents.x]\ncommand = [\"x\"]\nenv = { A = \"b\" }\n", true, false, ""},
		{"unknown top-level key", "defualt_agent = \"demo\"\n", true, false, "unknown key defualt_agent "},
		{"misspelt table is named once", "[session.atach]\ndefault_ttl_seconds = 60\n", true, false, "unknown key session.atach "},
		{"unknown key inside an agent", "[agents.x]\ncommand = [\"x\"]\nenvv = { A = \"b\" }\n", true, true, "unknown key agents.x.envv "},
		{"two unknown keys", "a = 1\nb = 2\n", true, false, "unknown keys a, b "},
		{"ttl over the limit", "[session.attach]\ndefault_ttl_seconds = 86401\n", true, false, "default_ttl_seconds = 86401 is over the limit of 86400"},
		{"not TOML", "x =\n", true, false, "toml: line 1"},
		{"live-session keys load", "[session]\nlinger_seconds = 600\n[permissions]\nmode = \"defer\"\ndefer_timeout_seconds = 60\n[agents.x]\ncommand = [\"x\"]\nlinger_seconds = 0\n", true, false, ""},
		{"linger over a day", "[session]\nlinger_seconds = 86401\n", true, false, "linger_seconds = 86401 is outside 0..86400"},
		{"negative agent linger", "[agents.x]\ncommand = [\"x\"]\nlinger_seconds = -1\n", true, false, "[agents.x] linger_seconds = -1"},
		{"[limits] keys load", "[limits]\npause_at_percent = 90\nafter_reset_turns = 3\nafter_reset_usd = 1.5\n", true, false, ""},
		{"pause_at_percent over 100", "[limits]\npause_at_percent = 101\n", true, false, "[limits] pause_at_percent = 101 is outside 1..100"},
		{"pause_at_percent zero", "[limits]\npause_at_percent = 0\n", true, false, "pause_at_percent = 0 is outside"},
		{"negative after_reset_turns", "[limits]\nafter_reset_turns = -1\n", true, false, "after_reset_turns = -1 is negative"},
		{"negative after_reset_usd", "[limits]\nafter_reset_usd = -1\n", true, false, "after_reset_usd = -1 is negative"},
		{"max_cost is a key of [session]", "[session]\nmax_cost = 2.5\n", true, false, ""},
		{"negative max_cost", "[session]\nmax_cost = -1\n", true, false, "max_cost = -1 is negative"},
		{"an agent with an empty command", "[agents.x]\ncommand = []\n", true, false, "[agents.x] command = [] names no program"},
		{"an agent whose program is blank", "[agents.x]\ncommand = [\"\", \"--acp\"]\n", true, false, `[agents.x] command = ["", "--acp"] names no program`},
		{"an override without command keeps the built-in one", "[agents.claude]\nlinger_seconds = 5\n", true, false, ""},
		{"negative max_attempts", "[session.restart]\nmax_attempts = -1\n", true, false, "[session.restart] max_attempts = -1 must be at least 1 (to turn automatic continuation off, set auto_continue = false)"},
		{"zero max_attempts", "[session.restart]\nmax_attempts = 0\n", true, false, "[session.restart] max_attempts = 0 must be at least 1"},
		{"zero window", "[session.restart]\nwindow_seconds = 0\n", true, false, "[session.restart] window_seconds = 0 must be at least 1"},
		{"zero max_replay_bytes", "[session.derive]\nmax_replay_bytes = 0\n", true, false, "[session.derive] max_replay_bytes = 0 must be at least 1024"},
		{"tiny max_replay_bytes", "[session.derive]\nmax_replay_bytes = 100\n", true, false, "max_replay_bytes = 100 must be at least 1024"},
		{"smallest max_replay_bytes", "[session.derive]\nmax_replay_bytes = 1024\n", true, false, ""},
		{"zero defer timeout", "[permissions]\ndefer_timeout_seconds = 0\n", true, false, "[permissions] defer_timeout_seconds = 0 must be at least 1"},
		{"sync timeout loads", "[sync]\ntimeout_seconds = 5\n", true, false, ""},
		{"max_pull_bytes loads", "[sync]\nmax_pull_bytes = 1048576\n", true, false, ""},
		{"zero max_pull_bytes", "[sync]\nmax_pull_bytes = 0\n", true, false, "[sync] max_pull_bytes = 0 must be at least 1"},
		{"zero sync timeout", "[sync]\ntimeout_seconds = 0\n", true, false, "[sync] timeout_seconds = 0 must be at least 1"},
		{"sync timeout over a day", "[sync]\ntimeout_seconds = 86401\n", true, false, "[sync] timeout_seconds = 86401 is over the limit of 86400"},
		{"negative handshake timeout", "[agent]\nhandshake_timeout_seconds = -5\n", true, false, "[agent] handshake_timeout_seconds = -5 must be at least 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if tc.write {
				if err := os.WriteFile(path, []byte(tc.toml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := LoadConfig(path, tc.explicit)
			if tc.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("LoadConfig: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrConfig) {
				t.Fatalf("LoadConfig = %v, want an ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name %q and the file", err, tc.wantErr)
			}
		})
	}
}

func TestConfig_LingerOfAnAgentWinsOverTheSessionDefault(t *testing.T) {
	zero, ten, sixHundred := 0, 10, 600
	c := &Config{Session: SessionConfig{LingerSeconds: &sixHundred}, Agents: map[string]AgentProfile{"quick": {LingerSeconds: &zero}, "slow": {LingerSeconds: &ten}, "plain": {}}}
	for agent, want := range map[string]int{"quick": 0, "slow": 10, "plain": 600, "demo": 600} {
		if got := c.LingerSeconds(agent); got != want {
			t.Errorf("LingerSeconds(%s) = %d, want %d", agent, got, want)
		}
	}
	t.Setenv("CI", "")
	if got := (&Config{}).LingerSeconds("demo"); got != DefaultLingerSeconds {
		t.Errorf("LingerSeconds with nothing configured and no CI = %d, want %d", got, DefaultLingerSeconds)
	}
	t.Setenv("CI", "true")
	if got := (&Config{}).LingerSeconds("demo"); got != 0 {
		t.Errorf("LingerSeconds with nothing configured under CI = %d, want 0", got)
	}
	if got := c.LingerSeconds("plain"); got != 600 {
		t.Errorf("a configured linger under CI = %d, want 600 (CI changes only the default)", got)
	}
	if got := (&Config{}).DeferTimeoutSeconds(); got != DefaultDeferTimeout {
		t.Errorf("default defer timeout = %d", got)
	}
}

func TestDefaultLinger(t *testing.T) {
	for ci, want := range map[string]int{"": DefaultLingerSeconds, "1": 0, "true": 0, "false": 0} {
		if got := DefaultLinger(ci); got != want {
			t.Errorf("DefaultLinger(CI=%q) = %d, want %d", ci, got, want)
		}
	}
}

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
