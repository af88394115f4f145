package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/config"
)

// runIn runs kandev in-process against home and returns its exit code,
// stdout and stderr.
func runIn(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	return kandev(t, home, "", args...)
}

func TestCLI_EveryMistakeSaysWhatIsWrongAndWhereHelpIs(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		want []string // on stdout+stderr
	}{
		{"help CMD is the command's help", []string{"help", "resume"}, 0, []string{"Usage: kandev resume", "--latest", "--all-workspaces"}},
		{"an unknown command points at --help", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "kandev --help"}},
		{"a near miss is named", []string{"statsu"}, 2, []string{`did you mean "status"`, "kandev --help"}},
		{"a stray argument points at the command's help", []string{"list", "extra"}, 2, []string{"extra", "kandev list --help"}},
		{"a negative --limit is a range error", []string{"list", "--limit", "-1"}, 2, []string{"--limit must be 0 or more", "got -1"}},
		{"a negative --since is a range error", []string{"events", "--latest", "--since", "-5"}, 2, []string{"--since must be 0 or more"}},
		{"an unknown event type to follow lists the types", []string{"events", "--latest", "--follow", "--type", "bogus"}, 2, []string{`--type "bogus"`, "turn_started", "tool_call"}},
		{"--turns below 0", []string{"attach", "--latest", "--turns", "-1"}, 2, []string{"--turns must be 0 or more"}},
		{"--latest in an empty home is not found", []string{"status", "--latest"}, 4, []string{"no sessions yet"}},
		{"--latest and an id", []string{"status", "abc", "--latest"}, 2, []string{"not both"}},
		{"--workspace and --all-workspaces", []string{"status", "--latest", "--workspace", "a", "--all-workspaces"}, 2, []string{"not both"}},
		{"no session named", []string{"close"}, 2, []string{"--latest"}},
		{"an empty listing of an empty home says how to start", []string{"list", "--state", "RUNNING"}, 0, []string{"kandev start"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runIn(t, home, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errs, w) {
					t.Fatalf("output lacks %q\nstdout: %s\nstderr: %s", w, out, errs)
				}
			}
			if code != 0 && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Fatalf("an error takes one line on stderr:\n%s", errs)
			}
		})
	}
}

func TestCLI_ListWithAFilterThatMatchesNothingSaysSoInsteadOfSuggestingAStart(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	os.MkdirAll(dir, 0o700)
	rec := `{"format":1,"id":"20261201-090000-aaaaaaaa","state":"WAITING_FOR_INPUT","workspace":"w","cwd":"/tmp","agent":"demo","created_at":"2026-12-01T09:00:00Z","last_activity_at":"2026-12-01T09:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, "20261201-090000-aaaaaaaa.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runIn(t, home, "list", "--state", "RUNNING")
	if code != 0 || !strings.Contains(out, "no session in state RUNNING") || strings.Contains(out, "kandev start") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, out, _ = runIn(t, home, "list", "--workspace", "other")
	if code != 0 || !strings.Contains(out, `no session in workspace "other"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, _, errs = runIn(t, home, "events", "20261201-090000-aaaaaaaa", "--type", "turn_ended,bogus")
	if code != ExitUsage || !strings.Contains(errs, `--type "bogus": not an event type`) || !strings.Contains(errs, "tool_result") {
		t.Fatalf("events --type bogus: exit %d: %s", code, errs)
	}
}

func TestConfig_AWrongNameSaysTheFileTheKeyAndTheValidValues(t *testing.T) {
	cases := []struct {
		name, toml string
		want       []string
	}{
		{"permission mode", "[permissions]\nmode = \"yolo\"\n", []string{"[permissions] mode = \"yolo\"", "ask, approve-reads, approve-all, deny-all, defer"}},
		{"near-miss permission mode", "[permissions]\nmode = \"approve-al\"\n", []string{`did you mean "approve-all"`}},
		{"default agent", "default_agent = \"cluade\"\n", []string{`default_agent = "cluade"`, `did you mean "claude"`, "known agents:", "demo"}},
		{"default agent far from any", "default_agent = \"zzzzzzzz\"\n", []string{`default_agent = "zzzzzzzz"`, "known agents:"}},
		{"agent runtime", "[agents.demo]\nruntime = \"contianer\"\n", []string{`[agents.demo] runtime = "contianer"`, `did you mean "container"`, "use process or container"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, "config.toml")
			os.WriteFile(path, []byte(tc.toml), 0o600)
			code, out, errs := runIn(t, home, "list")
			if code != ExitUsage || !strings.Contains(errs, path) {
				t.Fatalf("exit %d, want 2 naming %s\nstdout: %s\nstderr: %s", code, path, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Fatalf("stderr lacks %q: %s", w, errs)
				}
			}
		})
	}
	// A configured custom agent is a valid default.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_agent = \"mine\"\n[agents.mine]\ncommand = [\"x\"]\n"), 0o600)
	if code, _, errs := runIn(t, home, "list"); code != 0 {
		t.Fatalf("a custom default agent was refused: %s", errs)
	}
}

func TestStart_DefaultAgentNoticeEscapesAConfiguredAgentName(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{G: &Globals{}, Out: &Output{Out: &bytes.Buffer{}, Err: &stderr}}
	cfg := &config.Config{Agents: map[string]config.AgentProfile{"evil\x1b[31m": {Command: []string{"sh"}}}}
	if got := (&startCmd{}).agent(env, cfg); got != "demo" {
		t.Fatalf("agent %q, want demo", got)
	}
	if !strings.Contains(stderr.String(), `evil\x1b[31m`) || strings.Contains(stderr.String(), "\x1b") {
		t.Fatalf("notice %q: the name must show escaped", stderr.String())
	}
}
