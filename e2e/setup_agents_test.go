package e2e_test

// The agent's setup with real agents (behind KANDEV_E2E_NPM=1): the MCP
// servers a session was started with are the agent's again after a restore
// in a new process (its fake model server calls the mcpnotes tool both
// times, and the server's file shows both calls); the model it was started
// with is the model the agent asks for after the restore; a mode set
// through the editor is the agent's mode after a load in a new editor.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// notesMCPFile writes an --mcp file naming the mcpnotes server, which
// appends to notes; its token is a ${NOTES_TOKEN} reference.
func notesMCPFile(t *testing.T, w *world) (file, notes string) {
	t.Helper()
	outside := t.TempDir()
	file, notes, token := filepath.Join(outside, "mcp.json"), filepath.Join(outside, "notes.txt"), filepath.Join(outside, "token")
	os.WriteFile(token, []byte(setupSecret+"\n"), 0o600)
	w.env = append(w.env, "NOTES_TOKEN="+setupSecret)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{
		"command": buildTestdata(t, "mcpnotes"),
		"args":    []string{"-want-token-file", token},
		"env":     map[string]string{"MCPNOTES_FILE": notes, "MCPNOTES_TOKEN": "${NOTES_TOKEN}"},
	}}})
	os.WriteFile(file, b, 0o600)
	return file, notes
}

// startNoting starts a session with args and the notes MCP server (--mcp)
// and checks its first turn, which calls the server, left want in the
// server's file; explain (nil: nothing) adds what the rig saw when it did not.
func (w *world) startNoting(want string, explain func() string, args ...string) (id, notes string) {
	w.t.Helper()
	mcp, notes := notesMCPFile(w.t, w)
	id, res := w.start(append([]string{"--mcp", mcp}, args...)...)
	if res.code != 0 {
		w.t.Fatalf("start: %s", res)
	}
	if b, _ := os.ReadFile(notes); string(b) != want {
		more := ""
		if explain != nil {
			more = "\n" + explain()
		}
		w.t.Fatalf("after the first turn the MCP server's file holds %q\n%s%s", b, res, more)
	}
	return id, notes
}

// promptNotingAgain sends prompt to id from a new process, which restores
// the agent with the session's MCP servers, and checks the server's file
// then holds want and the session has two agent starts, which it returns.
func (w *world) promptNotingAgain(id, notes, prompt, want string) []eventlog.Event {
	w.t.Helper()
	if res := w.run("prompt", id, "--permissions", "approve-all", prompt); res.code != 0 {
		w.t.Fatalf("prompt: %s", res)
	} else if b, _ := os.ReadFile(notes); string(b) != want {
		w.t.Fatalf("after the restore the MCP server's file holds %q\n%s", b, res)
	}
	starts := codexAgentStarts(w.events(id))
	if len(starts) != 2 {
		w.t.Fatalf("agent_started events: %+v", starts)
	}
	return starts
}

// loadInNewEditor loads session id in a new kandev acp for agent; the
// caller quits the editor.
func (w *world) loadInNewEditor(agent string, id sdk.SessionId) (*editorProc, *sdk.LoadSessionResponse) {
	w.t.Helper()
	ed := w.openEditor("--agent", agent)
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	lr, err := ed.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		w.t.Fatalf("session/load: %v\n%s", err, ed.stderr)
	}
	return ed, &lr
}

func TestClaude_MCPServerAndModelSurviveARestoreInANewProcess(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	r.underCI() // the subject is the restore in each new command: no warm owner
	// Claude Code defers MCP tools behind its ToolSearch tool by default;
	// offered directly, the fake model can call the tool by its name.
	r.setAgentEnv("ENABLE_TOOL_SEARCH", "false")
	offered := func() string {
		var names []string
		for _, q := range r.requests() {
			for _, x := range q.Body.Tools {
				names = append(names, x.Name)
			}
		}
		raw, _ := os.ReadFile(r.reqLog)
		return fmt.Sprintf("tools offered: %v\n%.4000s", names, raw)
	}
	id, notes := r.startNoting("first call\n", offered, "--agent", "claude", "--permissions", "approve-all", "--model", "haiku", "please MCPNOTE first call")
	n := len(r.requests())
	if starts := r.promptNotingAgain(id, notes, "please MCPNOTE second call", "first call\nsecond call\n"); starts[1].Restore != "resume" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	reqs := r.requests()
	if len(reqs) <= n {
		t.Fatal("no model request after the restore")
	}
	for i, q := range reqs {
		offered := slices.ContainsFunc(q.Body.Tools, func(x struct{ Name string }) bool { return x.Name == "mcp__notes__append" })
		if !offered || !strings.Contains(q.Body.Model, "haiku") {
			t.Fatalf("request %d (of %d, %d before the restore): model %q, mcp__notes__append offered: %v", i+1, len(reqs), n, q.Body.Model, offered)
		}
	}
	t.Logf("model after the restore: %s", reqs[len(reqs)-1].Body.Model)
	assertNoSecretUnder(t, r.home, setupSecret)
}

func TestClaude_EditorSetsPlanModeAndALoadInANewEditorKeepsIt(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	ed := r.openEditor("--agent", "claude")
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: r.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, ed.stderr)
	}
	id := resp.SessionId
	if resp.Modes == nil || !slices.Contains(modeIDs(resp.Modes), "plan") {
		t.Fatalf("Claude's modes as the editor sees them: %s", mustJSON(resp.Modes))
	}
	if _, err := ed.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatalf("set_mode plan: %v\n%s", err, ed.stderr)
	}
	ed.mustPrompt(id, "hello in plan mode")
	ed.quit()
	if s := r.session(string(id)); s.Setup == nil || s.Setup.Mode != "plan" {
		t.Fatalf("recorded setup: %+v", s.Setup)
	}

	ed, lr := r.loadInNewEditor("claude", id)
	if lr.Modes == nil || lr.Modes.CurrentModeId != "plan" {
		t.Fatalf("after the load the agent's mode is %s", mustJSON(lr.Modes))
	}
	ed.mustPrompt(id, "hello again")
	ed.quit()
	starts := ofType(r.events(string(id)), eventlog.EventAgentStarted)
	if len(starts) != 2 {
		t.Fatalf("agent starts: %+v", starts)
	}
	t.Logf("restore %s, agent_started data %s", starts[1].Restore, starts[1].Data)
	reqs := r.requests()
	last := reqs[len(reqs)-1].input()
	if !strings.Contains(strings.ToLower(last), "plan mode") {
		t.Fatalf("the model request after the load does not run in plan mode:\n%.3000s", last)
	}
}

// codexSetupModel is a model codex-acp 2.x offers, with its effort: the rig's
// own model is gpt-5.5 at Codex's default effort. (The newer models of its
// list are offered to the fake server without tools, so an MCP call cannot
// be made on them.)
const codexSetupModel = "gpt-5.5[high]"

func TestCodex_MCPServerModelAndReadOnlyModeSurviveARestoreInANewProcess(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	r.underCI() // the subject is the restore in each new command: no warm owner
	id, notes := r.startNoting("first call\n", nil, "--agent", "codex", "--permissions", "approve-all", "--model", codexSetupModel, "please MCPNOTE first call")
	n := len(r.requests())
	if starts := r.promptNotingAgain(id, notes, "please MCPNOTE second call", "first call\nsecond call\n"); starts[1].Restore == "new" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	reqs := r.requests()
	if len(reqs) <= n {
		t.Fatal("no model request after the restore")
	}
	for i, q := range reqs {
		if q.Body.Model != "gpt-5.5" || q.Body.Reasoning.Effort != "high" {
			t.Fatalf("request %d (of %d, %d before the restore) asks for model %q at effort %q", i+1, len(reqs), n, q.Body.Model, q.Body.Reasoning.Effort)
		}
	}

	// The mode: set with kandev set, in force after a load in kandev acp.
	mustOK(t, r.run("set", id, "--mode", "read-only"))
	ed, lr := r.loadInNewEditor("codex", sdk.SessionId(id))
	if lr.Modes == nil || lr.Modes.CurrentModeId != "read-only" {
		t.Fatalf("after the load Codex's mode is %s", mustJSON(lr.Modes))
	}
	ed.mustPrompt(sdk.SessionId(id), "hello read only")
	ed.quit()
	starts := codexAgentStarts(r.events(id))
	t.Logf("restore %s, agent_started data %s", starts[len(starts)-1].Restore, starts[len(starts)-1].Data)
	reqs = r.requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(last.input(), "read-only") || last.Body.Reasoning.Effort != "high" {
		t.Fatalf("the request after the load (model %s) does not run read-only:\n%.3000s", last.Body.Model, last.input())
	}
	assertNoSecretUnder(t, r.home, setupSecret)
}

func TestGemini_MCPServerModelAndPlanModeSurviveARestoreInANewProcess(t *testing.T) {
	t.Parallel()
	r := newGeminiRig(t)
	r.underCI() // the subject is the restore in each new command: no warm owner
	id, notes := r.startNoting("first call\n", nil, "--agent", geminiAgent, "--permissions", "approve-all", "--model", "gemini-2.5-pro", "please MCPNOTE first call")
	n := len(r.requests())
	// Gemini CLI finds a session it saved only from the next minute on
	// (gemini_test.go): wait for it, so the restore is a session/load.
	waitForNextMinute(eventTime(t, codexAgentStarts(r.events(id))[0]))
	starts := r.promptNotingAgain(id, notes, "please MCPNOTE second call", "first call\nsecond call\n")
	if starts[1].Restore != "load" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	t.Logf("restore %s, agent_started data %s", starts[1].Restore, starts[1].Data)
	// The agent loop's requests (those that declare tools) ask for the model.
	loop := 0
	for i, q := range r.requests() {
		if len(q.Body.Tools) == 0 {
			continue
		}
		loop++
		if !strings.Contains(q.Path, "/models/gemini-2.5-pro:") {
			t.Fatalf("request %d (%d before the restore) asks for %s", i+1, n, q.Path)
		}
	}
	if loop < 4 {
		t.Fatalf("%d agent-loop requests, want 2 per turn", loop)
	}

	mustOK(t, r.run("set", id, "--mode", "plan"))
	ed, lr := r.loadInNewEditor(geminiAgent, sdk.SessionId(id))
	// Gemini answers with the models list ACP removed: the editor is shown
	// it as a config option of category model.
	if m := optionOf(lr.ConfigOptions, "model"); lr.Modes == nil || lr.Modes.CurrentModeId != "plan" || m == nil || m.Select == nil || m.Select.CurrentValue != "gemini-2.5-pro" {
		t.Fatalf("after the load Gemini's mode is %s, options %s", mustJSON(lr.Modes), mustJSON(lr.ConfigOptions))
	}
	ed.quit()
	starts = codexAgentStarts(r.events(id))
	// (Within a minute of the last turn Gemini's load fails again, and the
	// restore is a new session with the resume context: the mode holds too.)
	t.Logf("restore %s, agent_started data %s", starts[len(starts)-1].Restore, starts[len(starts)-1].Data)
	assertNoSecretUnder(t, r.home, setupSecret)
}

func TestOpenCode_MCPServerAndModeSurviveARestoreInANewProcess(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	r.underCI() // the subject is the restore in each new command: no warm owner
	id, notes := r.startNoting("noted\n", nil, "--agent", "opencode", "--permissions", "approve-all", "--mode", "plan", "please "+openCodeToolWord+" first")
	starts := r.promptNotingAgain(id, notes, "please "+openCodeToolWord+" again", "noted\nnoted\n")
	if starts[1].Restore == "new" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	t.Logf("restore %s, agent_started data %s", starts[1].Restore, starts[1].Data)
	// The mode goes through OpenCode's mode option at start; the resumed
	// session still has it (nothing applied again).
	if !strings.Contains(string(starts[0].Data), `"setup_applied":["option mode=plan"]`) || strings.Contains(string(starts[1].Data), "mode=plan") {
		t.Fatalf("setup applied at start %s, after the resume %s", starts[0].Data, starts[1].Data)
	}
	for _, m := range ofType(r.events(id), eventlog.EventMarker) {
		if strings.Contains(m.Summary, "does not take") {
			t.Fatalf("a setup warning: %s", m.Summary)
		}
	}
	assertNoSecretUnder(t, r.home, setupSecret)
}
