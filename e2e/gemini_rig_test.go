package e2e_test

// End-to-end tests against Gemini CLI (npm @google/gemini-cli 0.61.0, run as
// `gemini --acp`), offline. Gemini is pointed at testdata/fakemodel -format gemini, a
// deterministic Gemini API server on 127.0.0.1 that logs every request, so
// each test can check what the model was shown. GOOGLE_GEMINI_BASE_URL makes
// Gemini use gateway auth (no login); its settings turn usage statistics,
// telemetry and update checks off, so nothing leaves the machine. The CLI is
// installed once into the user's cache folder; the tests skip, visibly, only
// when that fails.

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
	geminiPackage = "@google/gemini-cli"
	geminiVersion = "0.61.0"
	// geminiAgent is a custom profile, so the suite does not depend on the
	// built-in gemini profile's command line.
	geminiAgent    = "gemini-test"
	geminiSlowWord = "slowly"
	// geminiSlowPrompt streams about 15 chunks, 400 ms apart: a turn of ~6 s.
	geminiSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	geminiToolWord   = "RUNTOOL"
	geminiToolCmd    = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
	// geminiSettings keeps Gemini CLI off the network but for the fake.
	geminiSettings = `{"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
 "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}`
)

var (
	geminiInstallOnce sync.Once
	geminiBin         string
	geminiSkipReason  string
)

// geminiInstall installs Gemini CLI once and returns its `gemini` script.
func geminiInstall(t *testing.T) string {
	t.Helper()
	requireNPMOptIn(t, "Gemini CLI")
	geminiInstallOnce.Do(func() { geminiBin, geminiSkipReason = geminiInstallVersion(geminiVersion) })
	if geminiBin == "" {
		t.Skip("SKIP: " + geminiSkipReason)
	}
	return geminiBin
}

// geminiInstallVersion installs Gemini CLI at version into the cache folder
// (once) and returns its `gemini` script, or "" and why not.
func geminiInstallVersion(version string) (bin, skip string) {
	dir := filepath.Join(codexCacheDir(), "gemini-cli-"+version)
	modules := filepath.Join(dir, "node_modules")
	installed := func() bool { return npmPackageVersion(filepath.Join(modules, geminiPackage)) == version }
	if skip = npmInstall(dir, installed, geminiPackage+"@"+version); skip != "" {
		return "", skip
	}
	return filepath.Join(modules, ".bin", "gemini"), ""
}

// geminiRig is a world whose gemini-test agent is the real Gemini CLI, with
// its own HOME (where Gemini keeps its sessions) and its own fake model.
type geminiRig struct {
	*world
	geminiHome string
	reqLog     string // the fake server's request log
}

func newGeminiRig(t *testing.T, fakeArgs ...string) *geminiRig {
	t.Helper()
	return newGeminiRigWith(t, geminiInstall(t), fakeArgs...)
}

// newGeminiRigWith is newGeminiRig on the Gemini CLI at bin.
func newGeminiRigWith(t *testing.T, bin string, fakeArgs ...string) *geminiRig {
	t.Helper()
	return newGeminiRigIn(t, newWorld(t), bin, fakeArgs...)
}

// newGeminiRigIn is newGeminiRigWith on the world w (which its config replaces).
func newGeminiRigIn(t *testing.T, w *world, bin string, fakeArgs ...string) *geminiRig {
	t.Helper()
	r := &geminiRig{world: w, geminiHome: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(r.geminiHome, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.geminiHome, ".gemini", "settings.json"), []byte(geminiSettings), 0o600); err != nil {
		t.Fatal(err)
	}

	var url string
	url, r.reqLog = startFakeModel(t, "gemini", append([]string{"-delay", "400ms", "-delay-word", geminiSlowWord}, fakeArgs...)...)
	// A real CLI's start is seconds of CPU: on a loaded machine its
	// initialize takes more than the default 60 s (CI: Gemini did).
	w.config(fmt.Sprintf(`[agent]
handshake_timeout_seconds = 180

[agents.%s]
command = [%q, "--acp"]
[agents.%s.env]
HOME = %q
GOOGLE_GEMINI_BASE_URL = %q
GEMINI_MODEL = "gemini-2.5-flash"
GEMINI_CLI_TRUST_WORKSPACE = "true"
GEMINI_CLI_NO_RELAUNCH = "true"
`, geminiAgent, bin, geminiAgent, r.geminiHome, url))
	return r
}

// geminiRequest is one generateContent request the fake model received.
type geminiRequest struct {
	N    int    `json:"n"`
	Path string `json:"path"`
	Body struct {
		Tools    []json.RawMessage `json:"tools"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string          `json:"text"`
				FunctionCall     json.RawMessage `json:"functionCall"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	} `json:"body"`
}

// input is the request's whole conversation as one string, for searching.
func (q geminiRequest) input() string {
	b, _ := json.Marshal(q.Body.Contents)
	return string(b)
}

// userTexts are the user's own texts the model was shown, in order (not the
// <session_context> Gemini CLI adds).
func (q geminiRequest) userTexts() []string {
	var out []string
	for _, c := range q.Body.Contents {
		for _, p := range c.Parts {
			if c.Role == "user" && p.Text != "" && !strings.HasPrefix(p.Text, "<") {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// modelTexts are the model's earlier answers the request carries, in order.
func (q geminiRequest) modelTexts() []string {
	var out []string
	for _, c := range q.Body.Contents {
		var b strings.Builder
		for _, p := range c.Parts {
			b.WriteString(p.Text)
		}
		if c.Role == "model" && b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// requests are the model requests (generateContent, streamed or not).
func (r *geminiRig) requests() []geminiRequest {
	r.t.Helper()
	return readRequestLog(r.t, r.reqLog, func(q geminiRequest) bool {
		return strings.Contains(q.Path, "GenerateContent") || strings.Contains(q.Path, "generateContent")
	})
}

// assertNoAgentSurvives waits up to 10 s for every process of this rig's
// Gemini (all of them have its HOME) to be gone.
func (r *geminiRig) assertNoAgentSurvives(after string) {
	r.t.Helper()
	waitGone(r.t, "Gemini CLI", after, func() []int { return liveProcessesWithEnv("HOME", r.geminiHome) })
}

// eventTime is when an event was written.
func eventTime(t *testing.T, e eventlog.Event) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		t.Fatalf("event %d has timestamp %q: %v", e.Seq, e.Timestamp, err)
	}
	return ts
}

// waitForEarlyInMinute returns at once in the first 40 s of a UTC minute and
// otherwise sleeps into the next one, so that what follows stays within one
// minute (Gemini's same-minute load), or, by waiting for the next minute,
// leaves it.
func waitForEarlyInMinute() {
	if now := time.Now().UTC(); now.Second() >= 40 {
		time.Sleep(now.Truncate(time.Minute).Add(time.Minute + 500*time.Millisecond).Sub(now))
	}
}

// waitForNextMinute sleeps until the UTC minute after t has begun.
func waitForNextMinute(t time.Time) {
	next := t.UTC().Truncate(time.Minute).Add(time.Minute + 200*time.Millisecond)
	if d := time.Until(next); d > 0 {
		time.Sleep(d)
	}
}
