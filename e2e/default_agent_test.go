package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// withPath gives the world a PATH of exactly dir: the agents "installed" on
// this machine are the programs in dir (the demo agent runs from the kandev
// binary itself, so it needs no PATH).
func (w *world) withPath(dir string) {
	env := w.env[:0:0]
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	w.env = append(env, "PATH="+dir)
}

// claudeOnPath installs a stand-in claude-agent-acp: for "is it installed",
// a shell script is enough.
func claudeOnPath(t *testing.T, w *world) {
	t.Helper()
	dir := filepath.Dir(writeScript(t, "claude-agent-acp", "exit 1\n"))
	w.withPath(dir)
}

func TestStart_WithoutDefaultAgentRunsTheDemoAndNamesTheInstalledRealAgents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	claudeOnPath(t, w)
	id, r := w.start("fix the flaky test")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	if s := w.session(id); s.Agent != "demo" {
		t.Fatalf("the session runs %q, want the demo agent", s.Agent)
	}
	var notice []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "demo agent") {
			notice = append(notice, line)
		}
	}
	if len(notice) != 1 {
		t.Fatalf("want one stderr line about the demo agent, got %d:\n%s", len(notice), r.stderr)
	}
	for _, want := range []string{"installed: claude;", "--agent claude", `default_agent = "claude"`, "config.toml"} {
		if !strings.Contains(notice[0], want) {
			t.Errorf("the notice %q does not say %q", notice[0], want)
		}
	}
	if strings.Contains(r.stdout, "demo agent") {
		t.Errorf("the notice went to stdout:\n%s", r.stdout)
	}

	// --json keeps stdout pure NDJSON and still tells the person on stderr.
	_, r = w.start("--json", "fix the flaky test")
	if r.code != 0 || !strings.Contains(r.stderr, "--agent claude") {
		t.Fatalf("start --json: %s", r)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("start --json printed a line that is not JSON: %q", line)
		}
	}
	// --quiet says nothing about it.
	if _, r = w.start("-q", "fix the flaky test"); r.code != 0 || strings.Contains(r.stderr, "demo agent") {
		t.Fatalf("start -q: %s", r)
	}
}

func TestStart_SaysNothingAboutTheDefaultWhenNoRealAgentIsInstalledOrTheConfigChose(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.withPath(t.TempDir())
	if _, r := w.start("fix the flaky test"); r.code != 0 || strings.Contains(r.stderr, "demo agent") {
		t.Fatalf("start with no real agent installed: %s", r)
	}
	claudeOnPath(t, w)
	w.config("default_agent = \"demo\"\n")
	if _, r := w.start("fix the flaky test"); r.code != 0 || strings.Contains(r.stderr, "demo agent") {
		t.Fatalf("start with default_agent set: %s", r)
	}
}

func TestAgents_MarksTheDefaultAgentInTextAndJSON(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	claudeOnPath(t, w)
	defaults := func() map[string]bool {
		var out struct {
			Agents []struct {
				Name      string
				Installed bool
				Default   *bool `json:"default"`
			}
		}
		decodeJSON(t, w.mustRun("--json", "agents").stdout, &out)
		got := map[string]bool{}
		for _, a := range out.Agents {
			if a.Default == nil {
				t.Fatalf("agent %s has no default field", a.Name)
			}
			if *a.Default {
				got[a.Name] = true
			}
			if a.Name == "claude" && !a.Installed {
				t.Fatal("the claude-agent-acp on PATH does not count as installed")
			}
		}
		return got
	}
	if got := defaults(); len(got) != 1 || !got["demo"] {
		t.Fatalf("default agents without default_agent: %v, want demo", got)
	}
	if text := w.mustRun("agents").stdout; !rowSays(text, "demo", "default") || rowSays(text, "claude", "default") {
		t.Fatalf("kandev agents does not mark demo (only) as the default:\n%s", text)
	}

	w.config("default_agent = \"claude\"\n")
	if got := defaults(); len(got) != 1 || !got["claude"] {
		t.Fatalf("default agents with default_agent = claude: %v", got)
	}
	if text := w.mustRun("agents").stdout; !rowSays(text, "claude", "default") || rowSays(text, "demo", "default") {
		t.Fatalf("kandev agents does not mark claude (only) as the default:\n%s", text)
	}
}

// rowSays reports whether the table row of agent name contains word.
func rowSays(table, name, word string) bool {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return strings.Contains(line, word)
		}
	}
	return false
}
