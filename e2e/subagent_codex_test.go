package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// Codex's subagents offline: codex-acp 2.6.0 serves them as child sessions
// (subagents RFD) when Codex offers its model the multi-agent tools, which
// Codex 0.166 does only for a model whose catalog entry has a
// multi_agent_version (its bundled gpt-5.5 has none). So the rig gives
// Codex a catalog of one model, gpt-5.5 with multi_agent_version v2, and
// turns on features.multi_agent_v2; the fake model then calls
// collaboration.spawn_agent, and the child runs against the same fake.

func codexSubagentRig(t *testing.T) *codexRig {
	t.Helper()
	catalog, err := filepath.Abs(filepath.Join("..", "testdata", "codex", "model-catalog-multi-agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.jsonl")
	rules := `{"match":"CDELEGATE","namespace":"collaboration","tool":"spawn_agent","arguments":"{\"task_name\":\"scout\",\"message\":\"CHILDWORK please\",\"fork_turns\":\"none\"}","once":true}
`
	if err := os.WriteFile(script, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return newCodexRig(t, codexOptions{fakeArgs: []string{"-script", script},
		config: "model_catalog_json = " + tomlString(catalog) + "\n", tables: "\n[features]\nmulti_agent_v2 = true\n"})
}

func tomlString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

func TestSubagent_CodexAdapterOfflineRecordsItsSpawnedAgent(t *testing.T) {
	t.Parallel()
	r := codexSubagentRig(t)
	id, res := r.start("--agent", "codex", "CDELEGATE now")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.closeOnCleanup(id)
	evs := r.waitForEvents(id, "the child's end", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventChildEnded)) > 0
	})
	started := ofType(evs, eventlog.EventChildStarted)
	if len(started) != 1 {
		t.Fatalf("children started: %d\n%s", len(started), codexDump(evs))
	}
	child := started[0].ChildID
	if got := childEnd(evs, child); got != "completed" {
		t.Fatalf("the child ended %q\n%s", got, codexDump(evs))
	}
	said := ""
	for _, e := range childEvents(evs, child) {
		if e.Type == eventlog.EventChildMessage && e.Role != "user" {
			said += e.Content
		}
	}
	if !strings.HasPrefix(said, "ack ") {
		t.Fatalf("the child's answer %q is not the fake model's\n%s", said, codexDump(evs))
	}
	// The child asked the fake model itself: a request without the
	// parent's conversation (fork_turns none; its task goes to the model
	// encrypted, as spawn_agent's schema marks it).
	own := false
	for _, q := range r.requests() {
		own = own || !strings.Contains(q.input(), "CDELEGATE")
	}
	if !own {
		t.Fatal("no request of the child's own reached the model")
	}
	if got := agentText(evs, lastTurn(evs)); strings.Contains(got, "CHILDWORK") {
		t.Fatalf("the parent's text has the child's in it: %q", got)
	}
	for _, m := range ofType(evs, eventlog.EventMarker) {
		if m.Kind == "subagent_input" {
			t.Fatalf("a warning on Codex's children: %+v", m)
		}
	}
	if n := r.session(id).Subagents; n != 1 {
		t.Fatalf("the record counts %d children", n)
	}
}
