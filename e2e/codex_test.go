package e2e_test

// End-to-end tests against a real production agent: the Codex ACP adapter
// (npm @agentclientprotocol/codex-acp, TypeScript over `codex app-server` of
// @openai/codex, which ships Codex natively per platform), offline. Codex is pointed
// at testdata/fakemodel -format responses, a deterministic OpenAI Responses server on
// 127.0.0.1 that logs every request, so each test can check what the model
// was shown. The adapter is installed once into the user's cache folder; the
// tests skip, visibly, only when it cannot be installed. The scenarios every
// agent shares are its row of scenarios_test.go.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

const (
	codexPackage = "@agentclientprotocol/codex-acp"
	codexVersion = "2.6.0"
	// codexSlowWord makes the fake server pause between streamed events.
	codexSlowWord = "slowly"
	// codexSlowPrompt streams about 20 events, 400 ms apart: a turn of ~8 s.
	codexSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	codexToolWord   = "RUNTOOL"
)

var (
	codexInstallOnce sync.Once
	codexBinPath     string
	codexSkipReason  string
)

// codexCacheDir is where the adapter and the tests' CODEX_HOMEs live: not
// under /tmp, where Codex warns about its home.
func codexCacheDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "kandev-test")
}

// codexInstall installs the adapter once (under a file lock, since several
// test binaries may race for it) and returns the binary's path.
func codexInstall(t *testing.T) string {
	t.Helper()
	requireNPMOptIn(t, "codex-acp")
	codexInstallOnce.Do(func() {
		codexBinPath, codexSkipReason = codexInstallVersion(codexVersion)
	})
	if codexBinPath == "" {
		t.Skip("SKIP: " + codexSkipReason)
	}
	return codexBinPath
}

// codexInstallVersion installs the adapter at version into the cache folder
// (once) and returns its path, or "" and why not.
func codexInstallVersion(version string) (bin, skip string) {
	dir := filepath.Join(codexCacheDir(), "codex-acp-"+version)
	modules := filepath.Join(dir, "node_modules")
	installed := func() bool { return npmPackageVersion(filepath.Join(modules, codexPackage)) == version }
	if skip = npmInstall(dir, installed, codexPackage+"@"+version); skip != "" {
		return "", skip
	}
	return filepath.Join(modules, ".bin", "codex-acp"), ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// codexRig is a world whose `codex` agent is the real adapter, with its own
// CODEX_HOME and its own fake model server.
type codexRig struct {
	*world
	bin       string // the installed codex-acp
	codexHome string
	reqLog    string // the fake server's request log
}

type codexOptions struct {
	mode     string // codex-acp's mode at start (INITIAL_AGENT_MODE): "agent-full-access" unless set
	fakeArgs []string
	world    *world // the rig's machine; nil: a new world
	bin      string // the adapter; "": the pinned one, installed
	// config is added to Codex's config.toml: top-level keys first, then
	// tables (after the rig's own keys and tables).
	config, tables string
}

func newCodexRig(t *testing.T, opt codexOptions) *codexRig {
	t.Helper()
	bin := opt.bin
	if bin == "" {
		bin = codexInstall(t)
	}
	w := opt.world
	if w == nil {
		w = newWorld(t)
	}
	if opt.mode == "" {
		opt.mode = "agent-full-access"
	}
	base := filepath.Join(codexCacheDir(), "codex-homes")
	os.MkdirAll(base, 0o755)
	codexHome, err := os.MkdirTemp(base, "home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(codexHome) })
	r := &codexRig{world: w, bin: bin, codexHome: codexHome}
	var url string
	url, r.reqLog = startFakeModel(t, "responses", append([]string{"-delay", "400ms", "-delay-word", codexSlowWord}, opt.fakeArgs...)...)

	cwd, _ := filepath.EvalSymlinks(w.cwd)
	// codex-acp 2.x picks the approval policy and sandbox from its mode
	// (INITIAL_AGENT_MODE below), not from this file. Its default mode,
	// "agent", has the model review each approval ("auto review"); the rig
	// starts in "agent-full-access" (never ask, no sandbox) unless a test
	// names another.
	codexConfig := opt.config + fmt.Sprintf(`
model = "gpt-5.5"
model_provider = "kandevfake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.kandevfake]
name = "kandev fake responses"
base_url = %q
wire_api = "responses"
env_key = "KANDEV_FAKE_RESPONSES_KEY"
requires_openai_auth = false
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, url, cwd) + opt.tables
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// The built-in codex profile, pointed at the installed binary.
	// HOME points at the rig too: Codex runs commands with `bash -lc`, and a
	// machine's own login profile (pyenv init, say) can take longer than
	// Codex waits for a command's first output.
	w.config(fmt.Sprintf("[agents.codex]\ncommand = [%q]\nenv = { CODEX_HOME = %q, HOME = %q, KANDEV_FAKE_RESPONSES_KEY = \"offline\", INITIAL_AGENT_MODE = %q }\n", bin, codexHome, codexHome, opt.mode))
	return r
}

// codexRequest is one request the fake model server received.
type codexRequest struct {
	N         int    `json:"n"`
	Path      string `json:"path"`
	SessionID string `json:"session_id"`
	Body      struct {
		Model     string            `json:"model"`
		Input     []json.RawMessage `json:"input"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
		Tools []json.RawMessage `json:"tools"`
	} `json:"body"`
}

// input is the request's whole conversation as one string, for searching.
func (q codexRequest) input() string {
	var b strings.Builder
	for _, it := range q.Body.Input {
		b.Write(it)
		b.WriteByte('\n')
	}
	return b.String()
}

// userTexts are the texts of the user messages the model was shown, in order.
func (q codexRequest) userTexts() []string {
	var out []string
	for _, raw := range q.Body.Input {
		var it struct {
			Type, Role string
			Content    []struct{ Text string }
		}
		json.Unmarshal(raw, &it)
		if it.Type == "message" && it.Role == "user" {
			var b strings.Builder
			for _, c := range it.Content {
				b.WriteString(c.Text)
			}
			if t := b.String(); !strings.HasPrefix(t, "<") {
				out = append(out, t)
			}
		}
	}
	return out
}

func (r *codexRig) requests() []codexRequest {
	r.t.Helper()
	return readRequestLog[codexRequest](r.t, r.reqLog, nil)
}

// assertNoAgentSurvives waits up to 10 s for every process of this rig (the
// adapter, `codex app-server`, the commands it ran) to be gone.
func (r *codexRig) assertNoAgentSurvives(after string) {
	r.t.Helper()
	waitGone(r.t, "Codex processes", after, func() []int { return liveProcessesWithEnv("CODEX_HOME", r.codexHome) })
}

// codexDump renders a log compactly for failure messages.
func codexDump(evs []eventlog.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d %s turn=%s %s %s %s %s\n", e.Seq, e.Type, e.TurnID, e.ToolCallID, e.ToolStatus, e.StopReason, strings.ReplaceAll(trimTo(e.Content+string(e.Data), 300), "\n", " "))
	}
	return b.String()
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func codexAgentStarts(evs []eventlog.Event) []eventlog.Event {
	return ofType(evs, eventlog.EventAgentStarted)
}
