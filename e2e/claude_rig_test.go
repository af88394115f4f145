package e2e_test

// End-to-end tests against Claude through its ACP adapter (npm
// @agentclientprotocol/claude-agent-acp, run as claude-agent-acp), offline.
// Claude Code is pointed at testdata/fakemodel -format messages, a deterministic Anthropic
// Messages server on 127.0.0.1 that logs every request, so each test can
// check what the model was shown. The adapter's SDK
// (@anthropic-ai/claude-agent-sdk 0.3.x) ships the native Claude Code in a
// platform package (claude-agent-sdk-linux-x64 and so on), which the adapter
// finds by itself; nothing else is installed. The adapter is installed once
// into the user's cache folder; the tests skip, visibly, only when that fails.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

const (
	claudeACPPackage = "@agentclientprotocol/claude-agent-acp"
	claudeACPVersion = "0.101.0"
	claudeSlowWord   = "slowly"
	// claudeSlowPrompt streams about 15 events, 400 ms apart: a turn of ~6 s.
	claudeSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	claudeToolWord   = "RUNTOOL"
	claudeToolCmd    = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
)

var (
	claudeInstallOnce sync.Once
	claudeAdapter     string // the installed claude-agent-acp
	claudeSkipReason  string
)

// claudeInstall installs the adapter once and returns its path.
func claudeInstall(t *testing.T) string {
	t.Helper()
	requireNPMOptIn(t, "claude-agent-acp")
	claudeInstallOnce.Do(func() {
		claudeAdapter, claudeSkipReason = claudeInstallVersion(claudeACPVersion)
	})
	if claudeAdapter == "" {
		t.Skip("SKIP: " + claudeSkipReason)
	}
	return claudeAdapter
}

// claudeInstallVersion installs the adapter at version into the cache
// folder (once) and returns its path, or "" and why not.
func claudeInstallVersion(version string) (adapter, skip string) {
	dir := filepath.Join(codexCacheDir(), "claude-agent-acp-"+version)
	modules := filepath.Join(dir, "node_modules")
	installed := func() bool {
		return npmPackageVersion(filepath.Join(modules, claudeACPPackage)) == version
	}
	if skip = npmInstall(dir, installed, claudeACPPackage+"@"+version); skip != "" {
		return "", skip
	}
	return filepath.Join(modules, ".bin", "claude-agent-acp"), ""
}

// npmPackageVersion is the version in dir/package.json, "" if unreadable.
func npmPackageVersion(dir string) string {
	var pkg struct{ Version string }
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// claudeRig is a world whose `claude` agent is the real adapter, with its
// own Claude config folder and its own fake model server.
type claudeRig struct {
	*world
	configDir string // CLAUDE_CONFIG_DIR: Claude's sessions live here
	reqLog    string // the fake server's request log
	adapter   string
	agentEnv  map[string]string // the claude agent's [agents.claude.env]
}

func newClaudeRig(t *testing.T, fakeArgs ...string) *claudeRig {
	t.Helper()
	return newClaudeRigIn(t, newWorld(t), fakeArgs...)
}

// newClaudeRigIn is newClaudeRig on the world w (one machine of a sync rig).
func newClaudeRigIn(t *testing.T, w *world, fakeArgs ...string) *claudeRig {
	t.Helper()
	return newClaudeRigWith(t, w, claudeInstall(t), fakeArgs...)
}

// newClaudeRigWith is newClaudeRigIn with the adapter at path adapter.
func newClaudeRigWith(t *testing.T, w *world, adapter string, fakeArgs ...string) *claudeRig {
	t.Helper()
	r := &claudeRig{world: w, configDir: t.TempDir()}
	var url string
	url, r.reqLog = startFakeModel(t, "messages", append([]string{"-delay", "400ms", "-delay-word", claudeSlowWord}, fakeArgs...)...)

	// The built-in claude profile, pointed at the installed adapter. HOME too
	// is the rig's: Claude Code reads settings from it.
	env := map[string]string{
		"HOME": r.configDir, "CLAUDE_CONFIG_DIR": r.configDir,
		"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "offline-fake-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
		"IS_SANDBOX": "1", // Claude Code refuses some modes as root otherwise
	}
	// Claude Code's own default permission mode: the adapter starts in
	// "auto" otherwise, which asks the model to classify each tool call (and
	// warns that a gateway is not billed for it) instead of asking kandev.
	settings := `{"permissions":{"defaultMode":"default"}}`
	if err := os.WriteFile(filepath.Join(r.configDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	r.adapter, r.agentEnv = adapter, env
	r.writeConfig()
	return r
}

// setAgentEnv sets one more variable in the claude agent's environment.
func (r *claudeRig) setAgentEnv(k, v string) {
	r.agentEnv[k] = v
	r.writeConfig()
}

func (r *claudeRig) writeConfig() {
	var b strings.Builder
	// The adapter's start is seconds of CPU: on a loaded machine its
	// initialize takes more than the default 60 s.
	b.WriteString("[agent]\nhandshake_timeout_seconds = 180\n\n")
	fmt.Fprintf(&b, "[agents.claude]\ncommand = [%q]\n[agents.claude.env]\n", r.adapter)
	for k, v := range r.agentEnv {
		fmt.Fprintf(&b, "%s = %q\n", k, v)
	}
	r.config(b.String())
}

// claudeRequest is one Messages request the fake model server received.
type claudeRequest struct {
	N    int    `json:"n"`
	Path string `json:"path"`
	Body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools        []struct{ Name string } `json:"tools"`
		OutputConfig struct {
			Effort string `json:"effort"`
		} `json:"output_config"`
		Speed string `json:"speed"` // "fast" in fast mode
	} `json:"body"`
	Beta string `json:"beta"` // the anthropic-beta header
}

// input is the request's whole conversation as one string, for searching.
func (q claudeRequest) input() string {
	var b strings.Builder
	for _, m := range q.Body.Messages {
		b.WriteString(m.Role + ": ")
		b.Write(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// userTexts are the user's own texts the model was shown, in order (not the
// reminders Claude Code adds in angle brackets).
func (q claudeRequest) userTexts() []string {
	var out []string
	for _, m := range q.Body.Messages {
		if m.Role != "user" {
			continue
		}
		var blocks []struct{ Type, Text string }
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			blocks = append(blocks, struct{ Type, Text string }{"text", s})
		} else {
			json.Unmarshal(m.Content, &blocks)
		}
		for _, bl := range blocks {
			if t := strings.TrimSpace(bl.Text); bl.Type == "text" && t != "" && !strings.HasPrefix(t, "<") {
				out = append(out, t)
			}
		}
	}
	return out
}

// requests are the model requests of Claude's agent loop (those that offer
// tools), in order: Claude Code's probes and side requests are left out.
func (r *claudeRig) requests() []claudeRequest {
	r.t.Helper()
	return readRequestLog(r.t, r.reqLog, func(q claudeRequest) bool { return q.N > 0 && len(q.Body.Tools) > 0 })
}

// assertNoAgentSurvives waits up to 10 s for every process of this rig (the
// adapter, Claude Code, the commands it ran) to be gone.
func (r *claudeRig) assertNoAgentSurvives(after string) {
	r.t.Helper()
	waitGone(r.t, "Claude processes", after, func() []int { return liveProcessesWithEnv("CLAUDE_CONFIG_DIR", r.configDir) })
}

// logTimings reports, for one kandev command begun at began, how long the
// agent took to be ready (launch to initialize and session ready), the turn,
// and the agent's stop.
func logTimings(t *testing.T, what string, began time.Time, total time.Duration, evs []eventlog.Event) {
	t.Helper()
	var ready, turnStart, turnEnd, exited time.Time
	for _, e := range evs {
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil || at.Before(began) {
			continue
		}
		switch e.Type {
		case eventlog.EventAgentStarted:
			ready = at
		case eventlog.EventTurnStarted:
			turnStart = at
		case eventlog.EventTurnEnded:
			turnEnd = at
		case eventlog.EventAgentExited:
			exited = at
		}
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	stopped := "the agent still runs (its owner lingers)"
	if !exited.IsZero() {
		stopped = "agent stopped " + ms(exited.Sub(turnEnd)) + " after the turn"
	}
	t.Logf("%s: %s in all; agent ready after %s, turn %s, %s",
		what, ms(total), ms(ready.Sub(began)), ms(turnEnd.Sub(turnStart)), stopped)
}
