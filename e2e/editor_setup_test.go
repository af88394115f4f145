package e2e_test

// kandev acp and the agent's setup: the editor is shown the agent's modes,
// models and config options, sets them through kandev (recorded, so they
// survive a new editor process), is shown changes made elsewhere, and its
// mcpServers reach the agent and are recorded; its "allow always" reaches
// the agent as that option.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// notesServer is the mcpnotes server as an editor gives it: its token is a
// ${NOTES_TOKEN} reference, expanded from kandev's environment at launch.
func (m *mcpWorld) notesServer(t *testing.T) sdk.McpServer {
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "notes", Command: buildTestdata(t, "mcpnotes"),
		Args: []string{"-want-token-file", m.token},
		Env:  []sdk.EnvVariable{{Name: "MCPNOTES_FILE", Value: m.notes}, {Name: "MCPNOTES_TOKEN", Value: "${NOTES_TOKEN}"}}}}
}

func modeIDs(m *sdk.SessionModeState) []string {
	var out []string
	for _, x := range m.AvailableModes {
		out = append(out, string(x.Id))
	}
	return out
}

func effortOf(t *testing.T, opts []sdk.SessionConfigOption) string {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && o.Select.Id == "effort" {
			return string(o.Select.CurrentValue)
		}
	}
	t.Fatalf("no effort option in %s", mustJSON(opts))
	return ""
}

// optionOf is config option id in opts, nil when it is not there.
func optionOf(opts []sdk.SessionConfigOption, id string) *sdk.SessionConfigOption {
	for i, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id || o.Boolean != nil && string(o.Boolean.Id) == id {
			return &opts[i]
		}
	}
	return nil
}

func TestEditor_SetupBothWaysAndMCPServersSurviveANewEditorProcess(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	notes := w.notesServer(t)
	ed := w.openEditor()
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{notes}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, ed.stderr)
	}
	id := resp.SessionId
	if resp.Modes == nil || strings.Join(modeIDs(resp.Modes), ",") != "ask,code" || resp.Modes.CurrentModeId != "ask" {
		t.Fatalf("session/new modes: %s", mustJSON(resp.Modes))
	}
	if m := optionOf(resp.ConfigOptions, "model"); m == nil || m.Select == nil || m.Select.CurrentValue != "demo-small" ||
		m.Select.Category == nil || *m.Select.Category != sdk.SessionConfigOptionCategoryModel {
		t.Fatalf("session/new: no model option of category model: %s", mustJSON(resp.ConfigOptions))
	}
	if effortOf(t, resp.ConfigOptions) != "low" {
		t.Fatalf("session/new options: %s", mustJSON(resp.ConfigOptions))
	}

	if _, err := ed.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "code"}); err != nil {
		t.Fatalf("set_mode: %v\n%s", err, ed.stderr)
	}
	if _, err := ed.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "model", Value: "demo-large"}}); err != nil {
		t.Fatalf("set the model option: %v\n%s", err, ed.stderr)
	}
	opt, err := ed.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "effort", Value: "high"}})
	if err != nil || effortOf(t, opt.ConfigOptions) != "high" {
		t.Fatalf("set_config_option: %s, %v\n%s", mustJSON(opt), err, ed.stderr)
	}
	// What the agent does not offer is refused and changes nothing.
	if _, err := ed.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Fatal("set_mode yolo, a mode the agent does not offer, was accepted")
	}
	ed.take(id)
	ed.mustPrompt(id, "/setup")
	if got := chunkText(ed.take(id), "agent"); got != setupLine {
		t.Fatalf("/setup after the editor set it: %q, want %q", got, setupLine)
	}
	ed.mustPrompt(id, "/tools")
	if got := chunkText(ed.take(id), "agent"); !strings.Contains(got, "MCP tools: notes/append") {
		t.Fatalf("/tools: %q", got)
	}
	ed.mustPrompt(id, "/mcp append first")
	if ups := ed.take(id); !strings.Contains(mustJSON(ups), "appended: first (token matches: true)") {
		t.Fatalf("/mcp: %s\n%s", mustJSON(ups), ed.stderr)
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
	s := w.session(string(id))
	if s.Setup == nil || s.Setup.Mode != "code" || s.Setup.Model != "demo-large" || s.Setup.Options["effort"] != "high" || strings.Join(s.Setup.MCPServers, ",") != "notes" {
		t.Fatalf("recorded setup: %+v", s.Setup)
	}

	// A new editor process loads it, giving its servers again.
	ed = w.openEditor()
	ed.initialize()
	ctx2, cancel2 := editorCtx()
	defer cancel2()
	lr, err := ed.conn.LoadSession(ctx2, sdk.LoadSessionRequest{SessionId: id, Cwd: w.cwd, McpServers: []sdk.McpServer{notes}})
	if err != nil {
		t.Fatalf("session/load: %v\n%s", err, ed.stderr)
	}
	if m := optionOf(lr.ConfigOptions, "model"); lr.Modes == nil || lr.Modes.CurrentModeId != "code" || m == nil || m.Select.CurrentValue != "demo-large" || effortOf(t, lr.ConfigOptions) != "high" {
		t.Fatalf("session/load answer: modes %s options %s", mustJSON(lr.Modes), mustJSON(lr.ConfigOptions))
	}
	ed.take(id)
	ed.mustPrompt(id, "/setup")
	if got := chunkText(ed.take(id), "agent"); got != setupLine {
		t.Fatalf("/setup after the load: %q", got)
	}
	ed.mustPrompt(id, "/mcp append second")
	if ups := ed.take(id); !strings.Contains(mustJSON(ups), "appended: second (token matches: true)") {
		t.Fatalf("/mcp after the load: %s", mustJSON(ups))
	}
	if b, _ := os.ReadFile(w.notes); string(b) != "first\nsecond\n" {
		t.Fatalf("the MCP server's file holds %q", b)
	}
	ed.quit()
	started := ofType(w.events(string(id)), eventlog.EventAgentStarted)
	if len(started) != 2 || started[1].Restore != "resume" {
		t.Fatalf("agent starts: %+v", started)
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}

func TestEditor_ChangesMadeElsewhereReachTheEditorOnce(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	ed.mustPrompt(id, "hello")
	ed.take(id)
	// kandev set in a shell: the editor's warm owner applies it, the editor is told.
	var set struct{ Queued, Applied bool }
	r := w.mustRun("--json", "set", string(id), "--mode", "code", "--set", "effort=high")
	decodeJSON(t, r.stdout, &set)
	if !set.Queued || !set.Applied {
		t.Fatalf("kandev set was not applied by the editor's warm owner: %s", r)
	}
	modes := func(ups []sdk.SessionUpdate) (out []string) {
		for _, u := range ups {
			if u.CurrentModeUpdate != nil {
				out = append(out, string(u.CurrentModeUpdate.CurrentModeId))
			}
		}
		return out
	}
	waitFor(t, 10*time.Second, "the editor to be shown the new mode and option", func() bool {
		ed.mu.Lock()
		defer ed.mu.Unlock()
		ups := ed.updates[id]
		opts := slices.ContainsFunc(ups, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && strings.Contains(mustJSON(u.ConfigOptionUpdate.ConfigOptions), `"currentValue":"high"`)
		})
		return slices.Contains(modes(ups), "code") && opts
	})
	ed.take(id)
	// The agent switching itself: its own update, passed through once.
	ed.mustPrompt(id, "/mode ask")
	if got := modes(ed.take(id)); strings.Join(got, ",") != "ask" {
		t.Fatalf("current_mode_update after /mode ask: %v, want one", got)
	}
	ed.quit()
}

func TestEditor_RefusesALiteralSecretInItsMCPServers(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	ed := w.openEditor()
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	leaky := sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: "web", Type: "http", Url: "https://mcp.example.com/mcp",
		Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer " + setupSecret}}}}
	_, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{leaky}})
	if err == nil || !strings.Contains(err.Error(), "${") {
		t.Fatalf("session/new with a literal secret: %v, want a refusal with advice", err)
	}
	ed.quit()
	var list struct{ Sessions []struct{ ID string } }
	decodeJSON(t, w.mustRun("--json", "list").stdout, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("sessions created: %+v", list.Sessions)
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}

func TestEditor_AllowAlwaysReachesTheAgentAsSuch(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	ed := w.openEditor()
	ed.always = true
	ed.initialize()
	id := ed.newSession(w.cwd)
	ed.mustPrompt(id, "/write a.txt one")
	ed.mustPrompt(id, "/write b.txt two")
	ed.mu.Lock()
	asked := len(ed.asked)
	ed.mu.Unlock()
	if asked != 1 {
		t.Fatalf("the editor was asked %d times; after allow_always the agent asks no more", asked)
	}
	if b, _ := os.ReadFile(w.cwd + "/b.txt"); string(b) != "two" {
		t.Fatalf("b.txt holds %q", b)
	}
	ed.quit()
	resolved := ofType(w.events(string(id)), eventlog.EventPermissionResolved)
	if len(resolved) != 1 {
		t.Fatalf("%d permission_resolved events", len(resolved))
	}
	var d struct {
		OptionID string `json:"option_id"`
		Allowed  bool
	}
	_ = json.Unmarshal(resolved[0].Data, &d)
	if d.OptionID != "allow_always" || !d.Allowed || resolved[0].Content != "selected allow_always" {
		t.Fatalf("logged %s %s", resolved[0].Content, resolved[0].Data)
	}
}

func TestEditor_TypeScriptSDKClientSetsTheSetupAndGivesMCPServersThatSurviveAReopen(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	notes, _ := json.Marshal([]sdk.McpServer{w.notesServer(t)})
	base := w.env
	w.env = append(base, "KANDEV_TS_MCP="+string(notes), `KANDEV_TS_SET={"mode":"code","options":{"effort":"high"}}`)
	first := w.runTSClient("first", "/mcp append from the TypeScript client")
	if s := first.Setup; s.Modes == nil || strings.Join(modeIDs(s.Modes), ",") != "ask,code" || optionOf(s.ConfigOptions, "model") == nil || effortOf(t, s.ConfigOptions) != "low" {
		t.Fatalf("the TypeScript client's session/new answer: %s", mustJSON(s))
	}
	if effortOf(t, first.SetOptions) != "high" {
		t.Fatalf("set_config_option answered %s", mustJSON(first.SetOptions))
	}
	if b, _ := os.ReadFile(w.notes); string(b) != "from the TypeScript client\n" || tsCount(first.Turn, "tool_call_update", "completed") != 1 {
		t.Fatalf("the editor's MCP server did not reach the agent: file %q, %s", b, mustJSON(first.Turn))
	}

	w.env = append(base, "KANDEV_TS_MCP="+string(notes))
	second := w.runTSClient("reopen", first.SessionID, "/setup")
	if s := second.Setup; s.Modes == nil || s.Modes.CurrentModeId != "code" || effortOf(t, s.ConfigOptions) != "high" {
		t.Fatalf("the load answer in a new process: %s", mustJSON(s))
	}
	if got := tsText(second.Turn, "agent_message_chunk"); got != "mode: code, model: demo-small, options: effort=high" {
		t.Fatalf("/setup after the reopen: %q", got)
	}
	if b, _ := os.ReadFile(w.notes); string(b) != "from the TypeScript client\n" {
		t.Fatalf("the MCP server's file holds %q", b)
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}

func TestEditor_LoadAddsItsMCPServersToAShellSession(t *testing.T) {
	t.Parallel()
	w := newMCPWorld(t)
	id, r := w.start("--linger", "0", "remember FIG")
	mustOK(t, r)
	ed := w.openEditor()
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	if _, err := ed.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: w.cwd, McpServers: []sdk.McpServer{w.notesServer(t)}}); err != nil {
		t.Fatalf("session/load: %v\n%s", err, ed.stderr)
	}
	ed.mustPrompt(sdk.SessionId(id), "/tools")
	if got := chunkText(ed.take(sdk.SessionId(id)), "agent"); !strings.Contains(got, "MCP tools: notes/append") {
		t.Fatalf("/tools after a load that gave a server: %q", got)
	}
	ed.quit()
	if s := w.session(id); s.Setup == nil || strings.Join(s.Setup.MCPServers, ",") != "notes" {
		t.Fatalf("recorded setup: %+v", s.Setup)
	}
	changed := ofType(w.events(id), eventlog.EventSetupChanged)
	if len(changed) != 1 || changed[0].Source != "editor" {
		t.Fatalf("setup_changed events: %+v", changed)
	}
	// A shell resume passes the recorded server too.
	if r := w.mustRun("prompt", id, "--linger", "0", "/mcp append from the shell"); !strings.Contains(r.stdout, "appended: from the shell (token matches: true)") {
		t.Fatalf("the shell's prompt: %s", r)
	}
	assertNoSecretUnder(t, w.home, setupSecret)
}
