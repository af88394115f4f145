package state

import (
	"os"
	"path/filepath"
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
		{"max_cost is a key of [session]", "[session]\nmax_cost = 2.5\n", true, false, ""},
		{"negative max_cost", "[session]\nmax_cost = -1\n", true, false, "max_cost = -1 is negative"},
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
			if err == nil || !isErr(err, ErrConfig) {
				t.Fatalf("LoadConfig = %v, want an ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name %q and the file", err, tc.wantErr)
			}
		})
	}
}
