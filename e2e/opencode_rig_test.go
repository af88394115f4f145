package e2e_test

// End-to-end tests against OpenCode (npm opencode-ai 1.18.33, run as
// `opencode acp`), offline. OpenCode is pointed at testdata/fakemodel -format chat, a
// deterministic OpenAI Chat Completions server on 127.0.0.1 that logs every
// request, through a provider in its config; its npm registry is the fake
// server too (it looks a plugin package up at every start and gets a 404).
// Every rig has its own HOME and XDG folders, so OpenCode's database, config
// and logs never touch the user's. The package is installed once into the
// user's cache folder; the tests skip, visibly, only when it cannot be.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const (
	openCodePackage = "opencode-ai"
	openCodeVersion = "1.18.33"
	// openCodeSlowPrompt streams about 14 chunks, 500 ms apart: a turn of ~7 s.
	openCodeSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	openCodeToolWord   = "RUNTOOL"
	openCodeToolCmd    = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
)

var (
	openCodeInstallOnce sync.Once
	openCodeBinPath     string
	openCodeSkipReason  string
)

// openCodeInstall installs opencode-ai once into the user's cache folder and
// returns the path of its `opencode` binary.
func openCodeInstall(t *testing.T) string {
	t.Helper()
	requireNPMOptIn(t, "OpenCode")
	openCodeInstallOnce.Do(func() {
		openCodeBinPath, openCodeSkipReason = openCodeInstallVersion(openCodeVersion)
	})
	if openCodeBinPath == "" {
		t.Skip("SKIP: " + openCodeSkipReason)
	}
	return openCodeBinPath
}

// openCodeInstallVersion installs opencode-ai at version into the cache
// folder (once) and returns its `opencode` binary, or "" and why not.
func openCodeInstallVersion(version string) (bin, skip string) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		return "", "the OpenCode suite runs on Linux and macOS only"
	}
	dir := filepath.Join(codexCacheDir(), "opencode-ai-"+version)
	bin = filepath.Join(dir, "node_modules", ".bin", "opencode")
	installed := func() bool {
		st, err := os.Stat(bin)
		return npmPackageVersion(filepath.Join(dir, "node_modules", openCodePackage)) == version && err == nil && st.Mode()&0o111 != 0
	}
	if skip = npmInstall(dir, installed, openCodePackage+"@"+version); skip != "" {
		return "", skip
	}
	return bin, ""
}

// openCodeRig is a world whose `opencode` agent is the real OpenCode, with
// its own HOME, XDG folders and fake model server.
type openCodeRig struct {
	*chatAgent
	bin     string
	dataDir string // XDG_DATA_HOME: tags every process of this rig
}

func newOpenCodeRig(t *testing.T, fakeArgs ...string) *openCodeRig {
	t.Helper()
	return newOpenCodeRigWith(t, openCodeInstall(t), fakeArgs...)
}

// newOpenCodeRigWith is newOpenCodeRig on the OpenCode at bin.
func newOpenCodeRigWith(t *testing.T, bin string, fakeArgs ...string) *openCodeRig {
	t.Helper()
	// The tool word calls the MCP test server's tool when the session has it
	// (setup_agents_test.go), else bash.
	fake := startFakeChat(t, append([]string{"-delay", "500ms", "-delay-word", "slowly", "-tool-word", openCodeToolWord,
		"-tool", `notes_append={"text":"noted"}`,
		"-tool", fmt.Sprintf(`bash={"command":%q,"description":"Writes the proof file"}`, openCodeToolCmd)}, fakeArgs...)...)
	w := newWorld(t)
	root := t.TempDir()
	data := filepath.Join(root, "data")
	r := &openCodeRig{chatAgent: &chatAgent{world: w, name: "opencode", label: "OpenCode", fake: fake, tagKey: "XDG_DATA_HOME", tagVal: data},
		bin: bin, dataDir: data}
	dirs := map[string]string{"HOME": "home", "XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data",
		"XDG_CACHE_HOME": "cache", "XDG_STATE_HOME": "state"}
	env := map[string]string{
		"npm_config_registry":           strings.TrimSuffix(fake.URL, "/v1") + "/npm/",
		"OPENCODE_DISABLE_MODELS_FETCH": "true", // models.dev is not offline
		"OPENCODE_DISABLE_AUTOUPDATE":   "true",
		"OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
		"OPENCODE_DISABLE_SHARE":        "true",
	}
	for k, sub := range dirs {
		env[k] = filepath.Join(root, sub)
		os.MkdirAll(env[k], 0o700)
	}
	// bash asks permission, and a denied call is answered to the model (by
	// default OpenCode ends the turn on a denial and the model never hears).
	config := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"model":   "fake/fake-model", "small_model": "fake/fake-model",
		"autoupdate": false, "share": "disabled",
		"permission":   map[string]any{"bash": "ask"},
		"experimental": map[string]any{"continue_loop_on_deny": true},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "kandev fake chat",
			"options": map[string]any{"baseURL": fake.URL, "apiKey": "offline"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake model"}},
		}},
	}
	b, _ := json.MarshalIndent(config, "", "  ")
	os.MkdirAll(filepath.Join(env["XDG_CONFIG_HOME"], "opencode"), 0o700)
	if err := os.WriteFile(filepath.Join(env["XDG_CONFIG_HOME"], "opencode", "opencode.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var toml strings.Builder
	// OpenCode's initialize is seconds of CPU: on a loaded machine it
	// needs more than the default 60 s (CI, stop 50).
	toml.WriteString("[agent]\nhandshake_timeout_seconds = 180\n\n")
	fmt.Fprintf(&toml, "[agents.opencode]\ncommand = [%q, \"acp\"]\n[agents.opencode.env]\n", bin)
	for k, v := range env {
		fmt.Fprintf(&toml, "%s = %q\n", k, v)
	}
	w.config(toml.String())
	return r
}
