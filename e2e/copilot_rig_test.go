package e2e_test

// End-to-end tests against GitHub Copilot CLI (npm @github/copilot 1.0.102,
// run as `copilot --acp`), offline. Copilot runs in its bring-your-own-key
// offline mode (COPILOT_OFFLINE, COPILOT_PROVIDER_BASE_URL) against
// testdata/fakemodel -format chat, a deterministic OpenAI Chat Completions server on
// 127.0.0.1 that logs every request. The npm package is a loader plus a
// native binary that unpacks about 235 MB of JavaScript on its first run;
// both are kept in the user's cache folder between runs (the unpacked part
// through COPILOT_PKG_CACHE_HOME), while every rig has its own HOME, XDG
// folders and COPILOT_HOME, so Copilot's sessions, config and logs never
// touch the user's. The tests skip, visibly, only when the package cannot be
// installed.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const (
	copilotPackage = "@github/copilot"
	copilotVersion = "1.0.102"
	// copilotSlowPrompt streams about 14 chunks, 500 ms apart: a turn of ~7 s.
	copilotSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	copilotToolWord   = "RUNTOOL"
	copilotToolCmd    = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
	// copilotModel is a model Copilot knows, so it applies that model's
	// token limits; the fake server answers whatever the name.
	copilotModel = "gpt-4.1"
)

var (
	copilotInstallOnce sync.Once
	copilotBinPath     string
	copilotSkipReason  string
)

// copilotInstall installs @github/copilot once into the user's cache folder,
// unpacks it there, and returns the path of its `copilot` command.
func copilotInstall(t *testing.T) string {
	t.Helper()
	requireNPMOptIn(t, "Copilot CLI")
	copilotInstallOnce.Do(func() {
		copilotBinPath, copilotSkipReason = copilotInstallVersion(copilotVersion)
	})
	if copilotBinPath == "" {
		t.Skip("SKIP: " + copilotSkipReason)
	}
	return copilotBinPath
}

// copilotInstallVersion installs @github/copilot at version into the cache
// folder (once), unpacks it there, and returns its `copilot` command, or ""
// and why not.
func copilotInstallVersion(version string) (bin, skip string) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		return "", "the Copilot suite runs on Linux and macOS only"
	}
	dir := filepath.Join(codexCacheDir(), "copilot-"+version)
	bin = filepath.Join(dir, "node_modules", ".bin", "copilot")
	installed := func() bool {
		st, err := os.Stat(bin)
		return npmPackageVersion(filepath.Join(dir, "node_modules", copilotPackage)) == version && err == nil && st.Mode()&0o111 != 0
	}
	if skip = npmInstall(dir, installed, copilotPackage+"@"+version); skip != "" {
		return "", skip
	}
	// The first run unpacks the CLI; do it once here rather than in
	// several tests at the same time.
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "COPILOT_PKG_CACHE_HOME="+copilotPkgCache(bin), "COPILOT_OFFLINE=true")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), version) {
		return "", fmt.Sprintf("copilot --version failed (%v): %s", err, lastLines(string(out), 5))
	}
	return bin, ""
}

// copilotPkgCache is where the CLI at bin (DIR/node_modules/.bin/copilot)
// is unpacked: DIR/unpacked, its COPILOT_PKG_CACHE_HOME.
func copilotPkgCache(bin string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), "unpacked")
}

// copilotRig is a world whose `copilot` agent is the real Copilot CLI, with
// its own HOME, XDG folders, COPILOT_HOME and fake model server.
type copilotRig struct {
	*chatAgent
	bin         string
	copilotHome string // COPILOT_HOME: tags every process of this rig
}

func newCopilotRig(t *testing.T, fakeArgs ...string) *copilotRig {
	t.Helper()
	return newCopilotRigWith(t, copilotInstall(t), fakeArgs...)
}

// newCopilotRigWith is newCopilotRig on the Copilot CLI at bin.
func newCopilotRigWith(t *testing.T, bin string, fakeArgs ...string) *copilotRig {
	t.Helper()
	fake := startFakeChat(t, append([]string{"-delay", "500ms", "-delay-word", "slowly", "-tool-word", copilotToolWord,
		"-tool", fmt.Sprintf(`bash={"command":%q,"description":"Writes the proof file"}`, copilotToolCmd)}, fakeArgs...)...)
	w := newWorld(t)
	root := t.TempDir()
	home := filepath.Join(root, "copilot")
	r := &copilotRig{chatAgent: &chatAgent{world: w, name: "copilot", label: "Copilot", fake: fake, tagKey: "COPILOT_HOME", tagVal: home},
		bin: bin, copilotHome: home}
	env := map[string]string{
		"COPILOT_OFFLINE":           "true",
		"COPILOT_PROVIDER_BASE_URL": fake.URL,
		"COPILOT_PROVIDER_API_KEY":  "offline",
		"COPILOT_MODEL":             copilotModel,
		"COPILOT_PKG_CACHE_HOME":    copilotPkgCache(bin),
		"COPILOT_HOME":              r.copilotHome,
	}
	for k, sub := range map[string]string{"HOME": "home", "XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data",
		"XDG_CACHE_HOME": "cache", "XDG_STATE_HOME": "state"} {
		env[k] = filepath.Join(root, sub)
		os.MkdirAll(env[k], 0o700)
	}
	var toml strings.Builder
	// A real CLI's start is seconds of CPU: on a loaded machine its
	// initialize takes more than the default 60 s.
	toml.WriteString("[agent]\nhandshake_timeout_seconds = 180\n\n")
	fmt.Fprintf(&toml, "[agents.copilot]\ncommand = [%q, \"--acp\"]\n[agents.copilot.env]\n", bin)
	for k, v := range env {
		fmt.Fprintf(&toml, "%s = %q\n", k, v)
	}
	w.config(toml.String())
	return r
}
