package e2e_test

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// agentOptionOf finds the _kandev/agent option among opts: its current
// value and the values it offers.
func agentOptionOf(t *testing.T, opts []sdk.SessionConfigOption) (string, []string) {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && o.Select.Id == "_kandev/agent" && o.Select.Options.Ungrouped != nil {
			var values []string
			for _, v := range *o.Select.Options.Ungrouped {
				values = append(values, string(v.Value))
			}
			return string(o.Select.CurrentValue), values
		}
	}
	t.Fatalf("no _kandev/agent select among %s", mustJSON(opts))
	return "", nil
}

func setAgent(ed *editorProc, id sdk.SessionId, agent string) (sdk.SetSessionConfigOptionResponse, error) {
	ctx, cancel := editorCtx()
	defer cancel()
	return ed.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "_kandev/agent", Value: sdk.SessionConfigValueId(agent)}})
}

// TestEditor_AgentOptionSwitchesASessionAndTheNewAgentRecalls drives
// kandev acp with the ACP Go SDK's client side: session/new offers the
// agent as a select of the installed agents; setting it switches a
// session whose warm owner runs in a shell, the next prompt recalls what
// was said before on the other agent, a switch mid-turn is refused with a
// JSON-RPC error, and an unknown agent is refused.
func TestEditor_AgentOptionSwitchesASessionAndTheNewAgentRecalls(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	ed := w.openEditor()
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	created, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, ed.stderr)
	}
	cur, values := agentOptionOf(t, created.ConfigOptions)
	if cur != "demo" || !strings.Contains(strings.Join(values, ","), "demo") || !strings.Contains(strings.Join(values, ","), "plain") || strings.Contains(strings.Join(values, ","), "ghost") {
		t.Fatalf("the agent option offers %v (current %s): want the installed agents, demo current", values, cur)
	}
	effortOf(t, created.ConfigOptions) // the agent's own options are still there
	// The editor's own session, its agent kept warm in this process.
	ed.mustPrompt(created.SessionId, "remember KIWI")
	if _, err := setAgent(ed, created.SessionId, "plain"); err != nil {
		t.Fatalf("set _kandev/agent: %v\n%s", err, ed.stderr)
	}
	ed.take(created.SessionId)
	ed.mustPrompt(created.SessionId, "recall")
	if got := chunkText(ed.take(created.SessionId), "agent"); !strings.Contains(got, "KIWI") {
		t.Fatalf("the editor's session recalls %q on plain", got)
	}

	// A shell session, warm in its own owner, switched from the editor.
	id, r := w.start("remember MANGO")
	mustOK(t, r)
	sid := sdk.SessionId(id)
	ed.load(sid, w.cwd)
	ed.take(sid)
	resp, err := setAgent(ed, sid, "plain")
	if err != nil {
		t.Fatalf("set _kandev/agent: %v\n%s", err, ed.stderr)
	}
	if cur, _ := agentOptionOf(t, resp.ConfigOptions); cur != "plain" {
		t.Fatalf("set_config_option answered current %s", cur)
	}
	if w.ownerAlive(id) {
		t.Fatal("the shell's warm owner of the old agent outlived the switch")
	}
	ed.mustPrompt(sid, "recall")
	if got := chunkText(ed.take(sid), "agent"); !strings.Contains(got, "MANGO") {
		t.Fatalf("after the editor switched the agent, recall answers %q", got)
	}
	if a := w.session(id).Agent; a != "plain" || len(switchesIn(w.events(id))) != 1 {
		t.Fatalf("agent %s, %d agent_switched events", a, len(switchesIn(w.events(id))))
	}
	assertSentOnce(t, w.events(id))

	if _, err := setAgent(ed, sid, "nosuch"); err == nil || !strings.Contains(err.Error(), "installed agents are") {
		t.Fatalf("an unknown agent: %v", err)
	}
	done := make(chan error, 1)
	started := len(ofType(w.events(id), eventlog.EventTurnStarted))
	go func() { _, err := ed.prompt(sid, "/sleep 3000\n/say slept"); done <- err }()
	// This turn's own start in the log, not a record that still named the
	// last turn (under load the switch went in before the prompt did).
	waitFor(t, time.Minute, "the editor's turn to run", func() bool {
		evs := w.eventsSoFar(id)
		return len(ofType(evs, eventlog.EventTurnStarted)) > started && turnEnd(evs, lastTurn(evs)) == ""
	})
	if _, err := setAgent(ed, sid, "demo"); err == nil || !strings.Contains(err.Error(), "kandev cancel") {
		t.Fatalf("a switch while the editor's turn runs: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the running turn: %v", err)
	}
	if w.session(id).Agent != "plain" {
		t.Fatal("a refused switch changed the agent")
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
}

// TestEditor_TypeScriptSDKClientSwitchesTheAgentOfALoadedSession: an
// editor written with the TypeScript ACP SDK loads a shell session, sets
// _kandev/agent, and its prompt is answered by the new agent, which
// recalls what was said to the old one.
func TestEditor_TypeScriptSDKClientSwitchesTheAgentOfALoadedSession(t *testing.T) {
	t.Parallel()
	w := switchWorld(t)
	id, r := w.start("remember KIWI")
	mustOK(t, r)
	base := w.env
	w.env = append(base, `KANDEV_TS_SET={"options":{"_kandev/agent":"plain"}}`)
	rep := w.runTSClient("reopen", id, "recall")
	w.env = base
	if cur, _ := agentOptionOf(t, rep.Setup.ConfigOptions); cur != "demo" {
		t.Fatalf("the load answer's agent option: %s", cur)
	}
	if cur, _ := agentOptionOf(t, rep.SetOptions); cur != "plain" {
		t.Fatalf("set_config_option answered current %s", cur)
	}
	if got := tsText(rep.Turn, "agent_message_chunk"); !strings.Contains(got, "KIWI") {
		t.Fatalf("recall after the TypeScript client switched the agent: %q", got)
	}
	if s := w.session(id); s.Agent != "plain" || len(switchesIn(w.events(id))) != 1 {
		t.Fatalf("agent %s after the switch", s.Agent)
	}
}
