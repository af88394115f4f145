package e2e_test

// End-to-end tests against Claude through its ACP adapter (npm
// @zed-industries/claude-agent-acp 0.23.1, run as claude-agent-acp), offline.
// Claude Code is pointed at testdata/fakemessages, a deterministic Anthropic
// Messages server on 127.0.0.1 that logs every request, so each test can
// check what the model was shown. The adapter's SDK bundles a Claude Code
// (run with node); the native Claude Code of @anthropic-ai/claude-code
// 2.1.328 opens a session about twice as fast, so the rig runs that one when
// its platform package is there (linux/amd64). Both are installed once into
// the user's cache folder; the tests skip, visibly, only when that fails.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

const (
	claudeACPPackage  = "@zed-industries/claude-agent-acp"
	claudeACPVersion  = "0.23.1"
	claudeCodePackage = "@anthropic-ai/claude-code"
	claudeCodeVersion = "2.1.328"
	claudeSlowWord    = "slowly"
	// claudeSlowPrompt streams about 15 events, 400 ms apart: a turn of ~6 s.
	claudeSlowPrompt = "slowly count sheep one two three four five six seven eight nine ten"
	claudeToolWord   = "RUNTOOL"
	claudeToolCmd    = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
)

var (
	claudeInstallOnce sync.Once
	claudeAdapter     string // the installed claude-agent-acp
	claudeNative      string // the native Claude Code, "" to use the SDK's own
	claudeSkipReason  string

	claudeFakeOnce sync.Once
	claudeFakeBin  string
	claudeFakeErr  string
)

// claudeInstall installs the adapter and Claude Code once and returns the
// adapter's path and the native Claude Code's ("" when there is none).
func claudeInstall(t *testing.T) (adapter, native string) {
	t.Helper()
	requireNPMOptIn(t, "claude-agent-acp")
	claudeInstallOnce.Do(func() {
		dir := filepath.Join(codexCacheDir(), "claude-agent-acp-"+claudeACPVersion)
		modules := filepath.Join(dir, "node_modules")
		adapter := filepath.Join(modules, ".bin", "claude-agent-acp")
		installed := func() bool {
			return npmPackageVersion(filepath.Join(modules, claudeACPPackage)) == claudeACPVersion &&
				npmPackageVersion(filepath.Join(modules, claudeCodePackage)) == claudeCodeVersion
		}
		claudeSkipReason = npmInstall(dir, installed,
			claudeACPPackage+"@"+claudeACPVersion, claudeCodePackage+"@"+claudeCodeVersion)
		if claudeSkipReason != "" {
			return
		}
		claudeAdapter = adapter
		if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
			native := filepath.Join(modules, "@anthropic-ai", "claude-code-linux-x64", "claude")
			if st, err := os.Stat(native); err == nil && st.Mode()&0o111 != 0 {
				claudeNative = native
			}
		}
	})
	if claudeAdapter == "" {
		t.Skip("SKIP: " + claudeSkipReason)
	}
	return claudeAdapter, claudeNative
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

// claudeFakeServer builds testdata/fakemessages once (go ./... skips testdata).
func claudeFakeServer(t *testing.T) string {
	t.Helper()
	claudeFakeOnce.Do(func() {
		bin := filepath.Join(filepath.Dir(kandevBin), "fakemessages")
		out, err := exec.Command("go", "build", "-o", bin, "../testdata/fakemessages").CombinedOutput()
		if err != nil {
			claudeFakeErr = fmt.Sprintf("building testdata/fakemessages: %v\n%s", err, out)
			return
		}
		claudeFakeBin = bin
	})
	if claudeFakeBin == "" {
		t.Fatal(claudeFakeErr)
	}
	return claudeFakeBin
}

// claudeRig is a world whose `claude` agent is the real adapter, with its
// own Claude config folder and its own fake model server.
type claudeRig struct {
	*world
	configDir string // CLAUDE_CONFIG_DIR: Claude's sessions live here
	reqLog    string // the fake server's request log
}

func newClaudeRig(t *testing.T, fakeArgs ...string) *claudeRig {
	t.Helper()
	adapter, native := claudeInstall(t)
	fake := claudeFakeServer(t)
	w := newWorld(t)
	r := &claudeRig{world: w, configDir: t.TempDir(), reqLog: filepath.Join(t.TempDir(), "requests.jsonl")}

	args := append([]string{"-log", r.reqLog, "-idle", "5m", "-delay", "400ms", "-delay-word", claudeSlowWord}, fakeArgs...)
	srv := exec.Command(fake, args...)
	stdout, _ := srv.StdoutPipe()
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("fake messages server printed %q (%v): %s", url, err, srvErr.String())
	}

	// The built-in claude profile, pointed at the installed adapter. HOME too
	// is the rig's: Claude Code reads settings from it.
	env := map[string]string{
		"HOME": r.configDir, "CLAUDE_CONFIG_DIR": r.configDir,
		"ANTHROPIC_BASE_URL": strings.TrimSpace(url), "ANTHROPIC_API_KEY": "offline-fake-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
		"IS_SANDBOX": "1", // Claude Code refuses some modes as root otherwise
	}
	if native != "" {
		env["CLAUDE_CODE_EXECUTABLE"] = native
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[agents.claude]\ncommand = [%q]\n[agents.claude.env]\n", adapter)
	for k, v := range env {
		fmt.Fprintf(&b, "%s = %q\n", k, v)
	}
	w.config(b.String())
	return r
}

// claudeRequest is one Messages request the fake model server received.
type claudeRequest struct {
	N    int    `json:"n"`
	Path string `json:"path"`
	Body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct{ Name string } `json:"tools"`
	} `json:"body"`
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
	b, err := os.ReadFile(r.reqLog)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	var out []claudeRequest
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var q claudeRequest
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			r.t.Fatalf("fake server log: %v: %s", err, line)
		}
		if q.N > 0 && len(q.Body.Tools) > 0 {
			out = append(out, q)
		}
	}
	return out
}

// assertNoAgentSurvives waits up to 10 s for every process of this rig (the
// adapter, Claude Code, the commands it ran) to be gone.
func (r *claudeRig) assertNoAgentSurvives(after string) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		live := liveProcessesWithEnv("CLAUDE_CONFIG_DIR", r.configDir)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("Claude processes still running 10 s after %s: pids %v", after, live)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logTimings reports, for one kandev command begun at began, how long the
// agent took to be ready (launch to initialize and session ready), the turn,
// and the agent's stop.
func logTimings(t *testing.T, what string, began time.Time, total time.Duration, evs []state.Event) {
	t.Helper()
	var ready, turnStart, turnEnd, exited time.Time
	for _, e := range evs {
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil || at.Before(began) {
			continue
		}
		switch e.Type {
		case state.EventAgentStarted:
			ready = at
		case state.EventTurnStarted:
			turnStart = at
		case state.EventTurnEnded:
			turnEnd = at
		case state.EventAgentExited:
			exited = at
		}
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	t.Logf("%s: %s in all; agent ready after %s, turn %s, agent stopped %s after the turn",
		what, ms(total), ms(ready.Sub(began)), ms(turnEnd.Sub(turnStart)), ms(exited.Sub(turnEnd)))
}

func TestClaude_PromptInANewProcessResumesTheClaudeSessionWithItsContext(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	first := "remember the word PAPAYA for later"
	began := time.Now()
	id, res := r.start("--agent", "claude", first)
	took := time.Since(began)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	if !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	logTimings(t, "start with a prompt", began, took, r.events(id))
	r.assertNoAgentSurvives("start exited")
	token := r.session(id).ResumeToken
	if token == "" {
		t.Fatal("no resume token after the first turn")
	}

	second := "which word did I ask you to remember"
	began = time.Now()
	res = r.run("prompt", id, second)
	took = time.Since(began)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs := r.events(id)
	logTimings(t, "prompt in a new process", began, took, evs)
	assertNoSeqGap(t, evs)
	starts := codexAgentStarts(evs)
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	if got := agentText(evs, lastTurn(evs)); got != "ack 2: "+second {
		t.Fatalf("second turn's answer: %q", got)
	}
	s := r.session(id)
	if s.ResumeToken != token || s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the second turn: token %q (was %q), state %s, stop %q", s.ResumeToken, token, s.State, s.StopReason)
	}

	// The model saw the first turn when it answered the second: the
	// conversation was restored, not merely its id reused.
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if got := reqs[1].userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(reqs[1].input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the second request:\n%s", reqs[1].input())
	}
}

func TestClaude_OwnerKilledMidTurnLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	first := "first fast turn about apples"
	id, res := r.start("--agent", "claude", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}

	owner := r.spawn("prompt", id, claudeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(claudeSlowPrompt))
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives("the owner was SIGKILLed")
	before := len(r.requests())
	killedAt := len(r.eventsSoFar(id)) // the kill may have torn the last line

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives("resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	evs := all[killedAt:]
	if starts := codexAgentStarts(evs); len(starts) != 1 || starts[0].Restore != "resume" {
		t.Errorf("agent_started after the kill: %+v", starts)
	}
	var continuations []state.Event
	for _, e := range ofType(evs, state.EventTurnStarted) {
		if e.Source == state.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s", len(continuations), codexDump(evs))
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}
	// The continuation's model request carried the earlier turns.
	reqs := r.requests()
	if len(reqs) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(reqs)-before)
	}
	users := reqs[len(reqs)-1].userTexts()
	if len(users) < 3 || users[0] != first || users[1] != claudeSlowPrompt {
		t.Fatalf("user messages the model saw for the continuation: %q", users)
	}
	if !strings.Contains(reqs[len(reqs)-1].input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the continuation's request")
	}

	// A second resume has nothing to continue: no turn, no model request.
	turns := len(ofType(r.events(id), state.EventTurnStarted))
	if res := r.run("resume", id); res.code != 0 {
		t.Fatalf("second resume: %s", res)
	}
	if n := len(ofType(r.events(id), state.EventTurnStarted)); n != turns {
		t.Fatalf("the second resume started %d turns", n-turns)
	}
	if n := len(r.requests()); n != len(reqs) {
		t.Fatalf("the second resume sent %d model requests", n-len(reqs))
	}
	r.assertNoAgentSurvives("the second resume exited")
}

func TestClaude_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	id, res := r.start("--agent", "claude", "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, claudeSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(claudeSlowPrompt))
	cancelled := time.Now()
	if res := r.run("cancel", id); res.code != 0 {
		owner.cmd.Process.Kill()
		t.Fatalf("cancel: %s", res)
	}
	res = owner.wait(t)
	t.Logf("the prompt ended %s after kandev cancel returned", time.Since(cancelled).Round(time.Millisecond))
	if res.code != 0 && res.code != 130 {
		t.Errorf("the cancelled prompt exited %d, want 0 or 130\n%s", res.code, res)
	}
	r.assertNoAgentSurvives("the cancelled prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	ended := ofType(evs, state.EventTurnEnded)
	if len(ended) == 0 || ended[len(ended)-1].StopReason != "cancelled" {
		t.Fatalf("turn_ended events: %+v", ended)
	}
	if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
	}
	if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
		t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
	}
	if res := r.run("prompt", id, "after the cancel"); res.code != 0 || !strings.Contains(res.stdout, "after the cancel") {
		t.Fatalf("prompt after cancel: %s", res)
	}
}

func TestClaude_PermissionModeAnswersClaudesBashRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    string
		allowed bool
		result  string // what the model is sent as the tool's result
	}{
		{"approve-all", true, "TOOL-OUTPUT-42"},
		{"deny-all", false, "User refused permission to run tool"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			r := newClaudeRig(t, "-tool-word", claudeToolWord, "-tool-command", claudeToolCmd)
			id, res := r.start("--agent", "claude", "--permissions", tc.mode, "please "+claudeToolWord+" now")
			if res.code != 0 {
				t.Fatalf("start: %s", res)
			}
			r.assertNoAgentSurvives("start exited")
			_, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt"))
			if ran := err == nil; ran != tc.allowed {
				t.Fatalf("the command ran: %v, want %v", ran, tc.allowed)
			}
			evs := r.events(id)
			assertNoSeqGap(t, evs)
			asked, answered := ofType(evs, state.EventPermissionRequest), ofType(evs, state.EventPermissionResolved)
			if len(asked) != 1 || len(answered) != 1 || !strings.Contains(string(answered[0].Data), fmt.Sprintf(`"allowed":%v`, tc.allowed)) {
				t.Fatalf("permission events: %+v %+v", asked, answered)
			}
			call := asked[0].ToolCallID
			if call == "" || answered[0].ToolCallID != call {
				t.Fatalf("permission request and answer name different tool calls: %q, %q", call, answered[0].ToolCallID)
			}
			results := ofType(evs, state.EventToolResult)
			if len(results) == 0 || results[len(results)-1].ToolCallID != call || !strings.Contains(results[len(results)-1].Content, tc.result) {
				t.Fatalf("tool_result events: %+v\nlog:\n%s", results, codexDump(evs))
			}
			// The model asked for the tool, then got its result back.
			reqs := r.requests()
			if len(reqs) != 2 || !strings.Contains(reqs[1].input(), `"tool_result"`) || !strings.Contains(reqs[1].input(), tc.result) || !strings.Contains(reqs[1].input(), call) {
				t.Fatalf("the model was not sent the result of tool call %s (%d requests)", call, len(reqs))
			}
			if got := agentText(evs, "t1"); !strings.Contains(got, "tool done 2: "+tc.result) {
				t.Fatalf("the answer after the tool: %q", got)
			}
			if s := r.session(id); s.StopReason != "end_turn" {
				t.Fatalf("stop reason %q", s.StopReason)
			}
		})
	}
}

func TestClaude_NeverPromptedSessionFallsBackToANewClaudeSession(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	began := time.Now()
	id, res := r.start("--agent", "claude")
	took := time.Since(began)
	if res.code != 0 {
		t.Fatalf("start without a prompt: %s", res)
	}
	t.Logf("start without a prompt: %s in all", took.Round(time.Millisecond))
	oldToken := r.session(id).ResumeToken
	res = r.run("prompt", id, "hello after an empty start")
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")
	evs := r.events(id)
	starts := codexAgentStarts(evs)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32002") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	s := r.session(id)
	if s.State != state.StateWaitingForInput || s.ResumeToken == "" || s.ResumeToken == oldToken {
		t.Fatalf("record after the fallback: state %s, token %q (old %q)", s.State, s.ResumeToken, oldToken)
	}
	if reqs := r.requests(); len(reqs) != 1 || len(reqs[0].userTexts()) != 1 {
		t.Fatalf("want one model request with only the prompt (no history to inject), got %d", len(reqs))
	}
}

func TestClaude_AgentsProbeShowsClaudesCapabilities(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t)
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			ProbeError   string `json:"probe_error"`
			Capabilities struct {
				AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
				AgentCapabilities struct {
					LoadSession         bool                       `json:"loadSession"`
					SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
			}
		}
	}
	decodeJSON(t, r.mustRun("--json", "agents", "--probe").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != "claude" {
			continue
		}
		c := a.Capabilities
		if !a.Installed || a.ProbeError != "" || c.AgentInfo.Version != claudeACPVersion || !c.AgentCapabilities.LoadSession {
			t.Fatalf("claude probe: %+v", a)
		}
		for _, k := range []string{"resume", "list", "fork", "close"} {
			if _, ok := c.AgentCapabilities.SessionCapabilities[k]; !ok {
				t.Errorf("sessionCapabilities lacks %s: %v", k, c.AgentCapabilities.SessionCapabilities)
			}
		}
		r.assertNoAgentSurvives("the probe")
		return
	}
	t.Fatal("kandev agents lists no claude")
}
