package e2e_test

// The agent's setup is part of the session: a model, mode and option set
// on start, and the MCP servers it was given, are what the demo agent has
// after every kind of restore, each in a new kandev process.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// setupAgents are demo agents whose switches choose the restore path.
const setupAgents = `[agents.loads]
command = ["{kandev}", "demo-agent", "--no-resume"]

[agents.forgets]
command = ["{kandev}", "demo-agent", "--fail-on-resume"]
`

// mcpWorld is a world with the mcpnotes MCP server in an --mcp file whose
// env holds a ${NOTES_TOKEN} reference; the token's value is in the
// environment kandev runs in and in a file outside the home (for the
// server to compare), never in the home.
type mcpWorld struct {
	*world
	mcpFile, notes, token string
}

const setupSecret = "sk-live-abcdefghijklmnopqrstuvwxyz012345"

func newMCPWorld(t *testing.T) *mcpWorld {
	w := newWorld(t)
	w.env = append(w.env, "CI=1", "NOTES_TOKEN="+setupSecret)
	w.config(setupAgents)
	outside := t.TempDir()
	m := &mcpWorld{world: w, mcpFile: filepath.Join(outside, "mcp.json"), notes: filepath.Join(outside, "notes.txt"), token: filepath.Join(outside, "token")}
	os.WriteFile(m.token, []byte(setupSecret+"\n"), 0o600)
	file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{
			"command": buildTestdata(t, "mcpnotes"),
			"args":    []string{"-want-token-file", m.token},
			"env":     map[string]string{"MCPNOTES_FILE": m.notes, "MCPNOTES_TOKEN": "${NOTES_TOKEN}"},
		},
		// Passed to the agent with its header expanded; the demo agent speaks stdio only.
		"web": map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "headers": map[string]string{"Authorization": "Bearer ${NOTES_TOKEN}"}},
	}})
	os.WriteFile(m.mcpFile, file, 0o600)
	return m
}

// assertNoSecretUnder fails when the secret is in any file under the home.
func assertNoSecretUnder(t *testing.T, home, secret string) {
	t.Helper()
	if out, err := exec.Command("grep", "-rl", secret, home).Output(); err == nil || len(out) > 0 {
		t.Fatalf("the secret is written under the home: %s", out)
	}
}

const setupLine = "mode: code, model: demo-large, options: effort=high"

func TestSetup_ModelModeOptionsAndMCPServersSurviveResumeLoadAndReplay(t *testing.T) {
	t.Parallel()
	cases := []struct{ agent, restore string }{
		{"demo", "resume"},
		{"loads", "load"},
		{"forgets", "new"}, // the replay path: a fresh agent session with the resume context
	}
	for _, c := range cases {
		t.Run(c.restore, func(t *testing.T) {
			t.Parallel()
			w := newMCPWorld(t)
			id, r := w.start("--agent", c.agent, "--model", "demo-large", "--mode", "code", "--set", "effort=high", "--mcp", w.mcpFile, "remember FIG")
			mustOK(t, r)

			r = w.mustRun("prompt", id, "recall")
			if !strings.Contains(r.stdout, "You asked me to remember: FIG.") || !strings.Contains(r.stdout, setupLine) {
				t.Fatalf("recall after the %s does not report the setup: %s", c.restore, r)
			}
			started := ofType(w.events(id), eventlog.EventAgentStarted)
			if len(started) != 2 || started[1].Restore != c.restore {
				t.Fatalf("want a second agent_started by %s, got %+v", c.restore, started)
			}
			r = w.mustRun("prompt", id, "/tools")
			if !strings.Contains(r.stdout, "MCP tools: notes/append (not connected, I speak MCP over stdio only: web (http))") {
				t.Fatalf("/tools after the %s: %s", c.restore, r)
			}
			r = w.mustRun("prompt", id, "/mcp append after the "+c.restore)
			if !strings.Contains(r.stdout, "appended: after the "+c.restore+" (token matches: true)") {
				t.Fatalf("/mcp after the %s: %s", c.restore, r)
			}
			if b, _ := os.ReadFile(w.notes); string(b) != "after the "+c.restore+"\n" {
				t.Fatalf("the MCP server's file holds %q", b)
			}

			var st struct {
				Session struct {
					Setup struct {
						Model, Mode string
						Options     map[string]string
						MCPServers  []string `json:"mcp_servers"`
					}
				}
			}
			decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
			if s := st.Session.Setup; s.Model != "demo-large" || s.Mode != "code" || s.Options["effort"] != "high" || strings.Join(s.MCPServers, ",") != "notes,web" {
				t.Fatalf("status shows setup %+v", s)
			}
			var list struct {
				Sessions []struct {
					Setup struct {
						MCPServers []string `json:"mcp_servers"`
					}
				}
			}
			decodeJSON(t, w.mustRun("--json", "list").stdout, &list)
			if len(list.Sessions) != 1 || len(list.Sessions[0].Setup.MCPServers) != 2 {
				t.Fatalf("list shows %+v", list)
			}
			if !strings.Contains(w.mustRun("recap", id).stdout, "setup     model demo-large, mode code, options effort=high, MCP notes, web") {
				t.Fatalf("recap does not show the setup: %s", w.mustRun("recap", id).stdout)
			}
			if n := len(ofType(w.events(id), eventlog.EventSetupChanged)); n != 1 {
				t.Fatalf("%d setup_changed events, want the one of start", n)
			}
			assertNoSecretUnder(t, w.home, setupSecret)
		})
	}
}

func TestSet_WarmOwnerAppliesItOnTheNextTurn(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	id, r := w.start("--linger", "30s", "remember FIG")
	mustOK(t, r)
	defer w.run("close", id)
	if !w.ownerAlive(id) {
		t.Fatal("no warm owner after start --linger 30s")
	}
	var set struct {
		Queued, Applied bool
		Steps           []string
		Setup           struct{ Model, Mode string }
	}
	decodeJSON(t, w.mustRun("--json", "set", id, "--mode", "code", "--model", "demo-large", "--set", "effort=high").stdout, &set)
	if !set.Queued || !set.Applied || set.Setup.Mode != "code" || strings.Join(set.Steps, ", ") != "mode code, option model=demo-large, option effort=high" {
		t.Fatalf("set on a warm owner is not applied at once: %+v", set)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, setupLine) {
		t.Fatalf("the next turn does not run under the new setup: %s", r)
	}
	evs := w.events(id)
	if n := len(ofType(evs, eventlog.EventAgentStarted)); n != 1 {
		t.Fatalf("%d agent starts: the warm owner was not used", n)
	}
	changed := ofType(evs, eventlog.EventSetupChanged)
	if len(changed) != 1 || changed[0].Source != "set" || !strings.Contains(string(changed[0].Data), `"applied":["mode code","option model=demo-large","option effort=high"]`) {
		t.Fatalf("setup_changed: %+v", changed)
	}

	// The agent changes its mode itself: logged, and it becomes the setup.
	w.mustRun("prompt", id, "/mode ask")
	waitFor(t, 10*time.Second, "the agent's own mode change in the record", func() bool {
		s := w.session(id)
		return s.Setup != nil && s.Setup.Mode == "ask"
	})
	last := ofType(w.events(id), eventlog.EventSetupChanged)
	if len(last) != 2 || last[1].Source != "agent" {
		t.Fatalf("the agent's mode change was not logged: %+v", last)
	}
	w.mustRun("close", id)
	waitFor(t, 10*time.Second, "the warm owner to exit", func() bool { return !w.ownerAlive(id) })

	// No owner: recorded, and applied when the agent next starts.
	r = w.mustRun("set", id, "--mode", "code")
	if !strings.Contains(r.stdout, "recorded: applied when the agent") {
		t.Fatalf("set without an owner: %s", r)
	}
	if r := w.mustRun("prompt", id, "--linger", "0", "/setup"); !strings.Contains(r.stdout, setupLine) {
		t.Fatalf("after a restore: %s", r)
	}
}

func TestSetup_RefusesLiteralSecretsInMCPEnvAndHeaders(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	dir := t.TempDir()
	cases := map[string]map[string]any{
		"env":    {"command": "notes-mcp", "env": map[string]string{"NOTES_API_KEY": setupSecret}},
		"header": {"type": "http", "url": "https://mcp.example.com", "headers": map[string]string{"Authorization": "Bearer " + setupSecret}},
	}
	for name, srv := range cases {
		file := filepath.Join(dir, name+".json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": srv}})
		os.WriteFile(file, b, 0o600)
		_, r := w.start("--mcp", file, "hello")
		if r.code != 2 || !strings.Contains(r.stderr, "looks like a secret") || !strings.Contains(r.stderr, "${") {
			t.Fatalf("%s: a literal secret was not refused with advice: %s", name, r)
		}
	}
	// The user's config, outside the home: the secret is theirs to keep there.
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[agents.demo]\nmcp = [\"gh\"]\n\n[mcp.gh]\ncommand = \"gh-mcp\"\nenv = { GITHUB_TOKEN = \""+setupSecret+"\" }\n"), 0o600)
	if r := w.run("--config", cfg, "start", "hello"); r.code != 2 || !strings.Contains(r.stderr, "[mcp.gh]") {
		t.Fatalf("a literal secret in [mcp.gh] was not refused: %s", r)
	}
	var list struct{ Sessions []json.RawMessage }
	decodeJSON(t, w.mustRun("--json", "list").stdout, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("a refused start left %d session(s)", len(list.Sessions))
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}

func TestSetup_WhatTheAgentDoesNotOfferIsAWarningMarker(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--mode", "plan", "--set", "effort=high", "remember FIG")
	mustOK(t, r)
	w.mustRun("prompt", id, "recall")
	var marks []eventlog.Event
	for _, m := range ofType(w.events(id), eventlog.EventMarker) {
		if m.Kind == "setup_not_offered" {
			marks = append(marks, m)
		}
	}
	// Once: the record then says what the agent runs (mode ask), so the next
	// launch has nothing it does not offer.
	if len(marks) != 1 || marks[0].Severity != "warning" || !strings.Contains(marks[0].Summary, "mode plan (demo offers ask, code)") {
		t.Fatalf("want one warning naming mode plan and what demo offers, got %+v", marks)
	}
	if s := w.session(id).Setup; s == nil || s.Mode != "ask" {
		t.Fatalf("the record keeps what the agent does not run: %+v", s)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "mode: ask, model: demo-small, options: effort=high") {
		t.Fatalf("what it offers is still applied: %s", r)
	}
}

func TestSetup_AgentSwitchingItselfMidTurnIsNoReasonToPause(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("remember FIG")
	mustOK(t, r)
	// Killed once the agent's switch is logged (the record has it by then), mid-turn.
	w.killAt(isType(eventlog.EventSetupChanged), 20*time.Second, "prompt", id, "/mode code\n/say working\n/sleep 60000")
	if s := w.session(id); s.Setup == nil || s.Setup.Mode != "code" {
		t.Fatalf("the agent's own switch is not the setup: %+v", s.Setup)
	}
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations, want 1", n)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "mode: code") {
		t.Fatalf("after the resume: %s", r)
	}
}

func TestSetup_InterruptedTurnUnderAnotherSetupPausesItsContinuation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("remember FIG")
	mustOK(t, r)
	w.killAt(isType(eventlog.EventAgentMessage), 20*time.Second, "prompt", id, "/say working\n/sleep 60000")
	w.mustRun("set", id, "--mode", "code")
	if r := w.run("resume", id); r.code != 5 || !strings.Contains(r.stderr, "setup changed") {
		t.Fatalf("resume of a turn cut off under another setup: %s", r)
	}
	var st struct{ Status struct{ Badge string } }
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "paused" {
		t.Fatalf("badge %q, want paused", st.Status.Badge)
	}
	if n := continuations(w.events(id)); n != 0 {
		t.Fatalf("%d continuations sent under the changed setup", n)
	}
}

func TestFork_KeepsTheParentsSetupUnderItsFlags(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	id, r := w.start("--mode", "code", "--set", "effort=high", "--mcp", w.mcpFile, "remember FIG")
	mustOK(t, r)
	var fork struct{ Session struct{ ID string } }
	decodeJSON(t, w.mustRun("--json", "fork", id, "--model", "demo-large").stdout, &fork)
	child := fork.Session.ID
	if r := w.mustRun("prompt", child, "recall"); !strings.Contains(r.stdout, "FIG") || !strings.Contains(r.stdout, setupLine) {
		t.Fatalf("the fork's agent does not run under the parent's setup and its flags: %s", r)
	}
	if r := w.mustRun("prompt", child, "/tools"); !strings.Contains(r.stdout, "notes/append") {
		t.Fatalf("the fork's agent lost the parent's MCP servers: %s", r)
	}
	if r := w.mustRun("prompt", id, "/setup"); !strings.Contains(r.stdout, "model: demo-small") {
		t.Fatalf("the fork's --model changed the parent: %s", r)
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}
