package e2e_test

// kandev acp and the demo agent as the published protocol has them: every
// message they send in this suite validates against the ACP v1 schema, and
// an editor is sent only what it declared (internal/acpconform). TestMain
// checks the whole suite's traffic (checkWireTraces); the tests here check
// one conversation each, so a failure names its behaviour.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/internal/acpconform"
	"github.com/kandev/kandev/internal/wiretrace"
)

// traceDir is where TestMain has kandev acp and every demo agent trace
// their conversations ("" when it could not make it).
var traceDir string

// checkWireTraces checks every conversation the suite traced; it fails
// the run (code 1) on a violation.
func checkWireTraces(code int) int {
	if traceDir == "" {
		return code
	}
	defer os.RemoveAll(traceDir)
	c, err := acpconform.Load()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ACP conformance: %v\n", err)
		return 1
	}
	// The demo agent's --legacy-models speaks the removed models list on purpose.
	r, err := c.CheckDir(traceDir, "legacy-models")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ACP conformance: %v\n", err)
		return 1
	}
	fmt.Printf("ACP conformance (schema of @agentclientprotocol/sdk %s): %d conversations of kandev acp and the demo agent, %d messages sent, %d validated against the schema, %d conversations with violations\n",
		acpconform.SchemaVersion, r.Conversations, r.Messages, r.Validated, len(r.Violations))
	if len(r.Violations) == 0 {
		return code
	}
	shown := 0
	for file, vs := range r.Violations {
		for _, v := range vs {
			if shown < 20 {
				fmt.Fprintf(os.Stderr, "--- FAIL: ACP conformance: %s %s\n", file, v)
			}
			shown++
		}
	}
	return 1
}

// traced is a world whose kandev acp and agents trace to a directory of
// its own, and the checker of it.
func traced(t *testing.T, w *world) func() acpconform.Report {
	dir := t.TempDir()
	w.env = append(w.env, wiretrace.Env+"="+dir)
	return func() acpconform.Report {
		t.Helper()
		c, err := acpconform.Load()
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.CheckDir(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// rawOption is what the editor reads of a config option.
type rawOption struct {
	ID, Type, Category string
	CurrentValue       json.RawMessage
	Options            []struct{ Value string }
}

func optionsIn(t *testing.T, result json.RawMessage) map[string]rawOption {
	t.Helper()
	var r struct {
		ConfigOptions []rawOption
		Models        json.RawMessage
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatal(err)
	}
	if r.Models != nil {
		t.Fatalf("the answer carries models, which the protocol removed: %s", result)
	}
	out := map[string]rawOption{}
	for _, o := range r.ConfigOptions {
		out[o.ID] = o
	}
	return out
}

func TestACP_AnEditorIsShownOnlyTheConfigOptionTypesItDeclared(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	check := traced(t, w)
	declared := map[string]any{"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}}

	// An editor that declared no boolean options: the demo agent's "fast"
	// is a select of true and false, set as the boolean it is.
	ed := w.rawACP()
	ed.stdin.Write(request(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	ed.next(t, "0")
	ed.stdin.Write(request(1, "session/new", map[string]any{"cwd": w.cwd, "mcpServers": []any{}}))
	created := ed.next(t, "1")
	opts := optionsIn(t, created.Result)
	if f := opts["fast"]; f.Type != "select" || string(f.CurrentValue) != `"false"` || len(f.Options) != 2 {
		t.Fatalf("fast, a boolean, is shown as %+v to an editor that did not declare booleans", f)
	}
	if m := opts["model"]; m.Type != "select" || m.Category != "model" {
		t.Fatalf("the model is not a config option of category model: %+v", m)
	}
	var sid struct{ SessionID string }
	json.Unmarshal(created.Result, &sid)
	ed.stdin.Write(request(2, "session/set_config_option", map[string]any{"sessionId": sid.SessionID, "configId": "fast", "value": "true"}))
	if set := ed.next(t, "2"); set.Error != nil || optionsIn(t, set.Result)["fast"].Type != "select" {
		t.Fatalf("set fast=true: %+v", set)
	}
	ed.stdin.Write(request(3, "session/prompt", map[string]any{"sessionId": sid.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "/setup"}}}))
	ed.next(t, "3")
	ed.stdin.Close()
	ed.exit(t)
	if s := w.session(sid.SessionID); s.Setup == nil || s.Setup.Options["fast"] != "true" {
		t.Fatalf("recorded setup: %+v", s.Setup)
	}

	// An editor that declared them gets the boolean as it is.
	ed = w.rawACP()
	ed.stdin.Write(request(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": declared}))
	ed.next(t, "0")
	ed.stdin.Write(request(1, "session/resume", map[string]any{"sessionId": sid.SessionID, "cwd": w.cwd, "mcpServers": []any{}}))
	if f := optionsIn(t, ed.next(t, "1").Result)["fast"]; f.Type != "boolean" || string(f.CurrentValue) != "true" {
		t.Fatalf("fast to an editor that declared booleans: %+v", f)
	}
	ed.stdin.Close()
	ed.exit(t)
	w.mustRun("close", sid.SessionID)

	r := check()
	if r.Conversations < 3 || len(r.Violations) > 0 {
		t.Fatalf("%d conversations traced, violations: %v", r.Conversations, r.Violations)
	}
}

func TestACP_AnAgentWithTheRemovedModelsListIsShownAModelOption(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	check := traced(t, w)
	w.config("[agents.legacy]\ncommand = [\"{kandev}\", \"demo-agent\", \"--legacy-models\"]\n")
	ed := w.rawACP()
	ed.stdin.Write(request(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	ed.next(t, "0")
	ed.stdin.Write(request(1, "session/new", map[string]any{"cwd": w.cwd, "mcpServers": []any{}, "_meta": map[string]any{"kandev": map[string]any{"agent": "legacy"}}}))
	created := ed.next(t, "1")
	m := optionsIn(t, created.Result)["model"]
	if m.Type != "select" || m.Category != "model" || string(m.CurrentValue) != `"demo-small"` || len(m.Options) != 2 {
		t.Fatalf("the models list is shown as %+v (answer %s)", m, created.Result)
	}
	var sid struct{ SessionID string }
	json.Unmarshal(created.Result, &sid)
	ed.stdin.Write(request(2, "session/set_config_option", map[string]any{"sessionId": sid.SessionID, "configId": "model", "value": "demo-large"}))
	if set := ed.next(t, "2"); set.Error != nil || string(optionsIn(t, set.Result)["model"].CurrentValue) != `"demo-large"` {
		t.Fatalf("set the model: %+v", set)
	}
	ed.stdin.Write(request(3, "session/prompt", map[string]any{"sessionId": sid.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "/setup"}}}))
	ed.next(t, "3")
	ed.stdin.Close()
	ed.exit(t)
	if s := w.session(sid.SessionID); s.Setup == nil || s.Setup.Model != "demo-large" {
		t.Fatalf("recorded setup: %+v", s.Setup)
	}
	w.mustRun("close", sid.SessionID)
	// The demo agent's own side speaks the removed list on purpose: only
	// kandev acp's conversations are checked here.
	r := check()
	for file, vs := range r.Violations {
		if strings.HasPrefix(file, "acp-") {
			t.Fatalf("%s: %v", file, vs)
		}
	}
}

func TestACP_TheSchemaCopyIsTheOnePublishedWithTheSDK(t *testing.T) {
	requireNPMOptIn(t, "the protocol's TypeScript SDK")
	t.Parallel()
	dir := t.TempDir()
	pack := exec.Command("npm", "pack", "@agentclientprotocol/sdk@"+acpconform.SchemaVersion, "--pack-destination", dir)
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tgz, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(tgz) != 1 {
		t.Fatalf("npm pack left %v", tgz)
	}
	if out, err := exec.Command("tar", "-xzf", tgz[0], "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	for _, name := range []string{"schema.json", "schema.unstable.json"} {
		published, err := os.ReadFile(filepath.Join(dir, "package", "schema", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		copied, err := os.ReadFile(filepath.Join("..", "internal", "acpconform", "schema", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(published, copied) {
			t.Fatalf("internal/acpconform/schema/v1/%s differs from the one @agentclientprotocol/sdk %s publishes", name, acpconform.SchemaVersion)
		}
	}
}
