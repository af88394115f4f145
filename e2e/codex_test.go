package e2e_test

// End-to-end tests against a real production agent: the Codex ACP adapter
// (npm @agentclientprotocol/codex-acp, TypeScript over `codex app-server` of
// @openai/codex, which ships Codex natively per platform), offline. Codex is pointed
// at testdata/fakemodel -format responses, a deterministic OpenAI Responses server on
// 127.0.0.1 that logs every request, so each test can check what the model
// was shown. The adapter is installed once into the user's cache folder; the
// tests skip, visibly, only when it cannot be installed.

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
	"github.com/kandev/kandev/state"
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
	realAgentWorld(w)
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
	codexConfig := fmt.Sprintf(`model = "gpt-5.5"
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
`, url, cwd)
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

// codexStreamingTurn holds when the turn for prompt has streamed agent text.
func codexStreamingTurn(prompt string) func([]eventlog.Event) bool {
	return func(evs []eventlog.Event) bool {
		turn := ""
		for _, e := range evs {
			if e.Type == eventlog.EventUserMessage && e.Content == prompt {
				turn = e.TurnID
			}
			if turn != "" && e.Type == eventlog.EventAgentMessage && e.TurnID == turn {
				return true
			}
		}
		return false
	}
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

func TestCodex_PromptInANewProcessResumesTheCodexSessionWithItsContext(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	first := "remember the word PAPAYA for later"
	id, res := r.start("--agent", "codex", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	if !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	r.assertNoAgentSurvives("start exited")
	token := r.session(id).ResumeToken
	if token == "" {
		t.Fatal("no resume token after the first turn")
	}

	second := "which word did I ask you to remember"
	res = r.run("prompt", id, second)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	r.assertNoAgentSurvives("prompt exited")

	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := codexAgentStarts(evs)
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	if got := agentText(evs, lastTurn(evs)); got != "ack 2: "+second {
		t.Fatalf("second turn's answer: %q", got)
	}
	s := r.session(id)
	agentUsage(t, evs, s, reported{context: true, tokens: true}) // codex-acp 2.x reports tokens (0.16 did not)
	if s.ResumeToken != token || s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the second turn: token %q (was %q), state %s, stop %q", s.ResumeToken, token, s.State, s.StopReason)
	}

	// The model saw the first turn when it answered the second: the
	// conversation was restored, not merely its id reused.
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	q := reqs[1]
	if q.Path != "/v1/responses" || q.SessionID != token {
		t.Fatalf("second request: path %q, session-id %q, want /v1/responses and %q", q.Path, q.SessionID, token)
	}
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(q.input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the second request's input:\n%s", q.input())
	}
}

func TestCodex_OwnerKilledMidStreamLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	first := "first fast turn about apples"
	id, res := r.start("--agent", "codex", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}

	owner := r.spawn("prompt", id, codexSlowPrompt)
	evs := r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(codexSlowPrompt))
	starts := codexAgentStarts(evs)
	agentPID := starts[len(starts)-1].PID
	if _, ppid := procState(agentPID); ppid != owner.cmd.Process.Pid {
		t.Fatalf("codex-acp %d has parent %d, want the owner %d", agentPID, ppid, owner.cmd.Process.Pid)
	}
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives("the owner was SIGKILLed")

	var st struct {
		Status struct {
			NeedsResume bool `json:"needs_resume"`
			Reason      string
			Badge       string
		}
	}
	decodeJSON(t, r.mustRun("--json", "status", id).stdout, &st)
	if !st.Status.NeedsResume || st.Status.Reason != "agent_not_running" || st.Status.Badge != "needs-resume" {
		t.Fatalf("status after the kill: %+v", st.Status)
	}
	before := len(r.requests())
	killedAt := len(r.eventsSoFar(id)) // the kill may have torn the last line

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives("resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	evs = all[killedAt:]

	// Repair appended a shutdown end to the killed turn; restore was native.
	slowTurn := ""
	for _, e := range all {
		if e.Type == eventlog.EventUserMessage && e.Content == codexSlowPrompt {
			slowTurn = e.TurnID
		}
	}
	repaired := false
	for _, e := range ofType(evs, eventlog.EventTurnEnded) {
		repaired = repaired || e.TurnID == slowTurn && e.StopReason == "shutdown"
	}
	if !repaired {
		t.Errorf("the killed turn %s got no turn_ended shutdown after resume: %+v", slowTurn, ofType(evs, eventlog.EventTurnEnded))
	}
	if starts := codexAgentStarts(evs); len(starts) != 1 || starts[0].Restore != "resume" {
		t.Errorf("agent_started after the kill: %+v", starts)
	}
	var continuations []eventlog.Event
	for _, e := range ofType(evs, eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s\nturns after the kill: %+v", len(continuations), res, ofType(evs, eventlog.EventTurnStarted, eventlog.EventTurnEnded))
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}

	// The model request of the continuation carried the earlier turns.
	reqs := r.requests()
	if len(reqs) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(reqs)-before)
	}
	q := reqs[len(reqs)-1]
	if token := r.session(id).ResumeToken; q.SessionID != token {
		t.Fatalf("the continuation was sent for codex session %q, want the restored %q", q.SessionID, token)
	}
	users := q.userTexts()
	if len(users) < 3 || users[0] != first || users[1] != codexSlowPrompt || users[len(users)-1] == codexSlowPrompt {
		t.Fatalf("user messages the model saw for the continuation: %q", users)
	}
	if !strings.Contains(q.input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the continuation's input:\n%s", q.input())
	}
	answer := agentText(all, continuations[0].TurnID)
	if !strings.HasPrefix(answer, fmt.Sprintf("ack %d: ", q.N)) || !strings.Contains(res.stdout, answer) {
		t.Fatalf("the continuation's answer %q is not what resume showed:\n%s", answer, res)
	}
}

func TestCodex_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	id, res := r.start("--agent", "codex", "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, codexSlowPrompt)
	r.waitForEvents(id, "the slow turn to stream", codexStreamingTurn(codexSlowPrompt))
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
	ended := ofType(evs, eventlog.EventTurnEnded)
	if len(ended) == 0 || ended[len(ended)-1].StopReason != "cancelled" {
		t.Fatalf("turn_ended events: %+v", ended)
	}
	if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
	}
	// The model's reply was cut short: its last words never reached kandev.
	if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
		t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
	}
	// The session is still usable.
	if res := r.run("prompt", id, "after the cancel"); res.code != 0 || !strings.Contains(res.stdout, "after the cancel") {
		t.Fatalf("prompt after cancel: %s", res)
	}
}

// Codex 0.166 dropped approval_policy "untrusted": a command is put to the
// client when the model asks to run it outside the sandbox, in a mode that
// asks (workspace-write: "on-request", reviewed by the user).
func TestCodex_PermissionModeAnswersCodexEscalationRequests(t *testing.T) {
	t.Parallel()
	command := "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"
	opts := codexOptions{mode: "workspace-write", fakeArgs: []string{"-tool-word", codexToolWord, "-tool-escalate", "-tool-command", command}}

	t.Run("approve-all runs the command and the model sees its output", func(t *testing.T) {
		t.Parallel()
		r := newCodexRig(t, opts)
		id, res := r.start("--agent", "codex", "--permissions", "approve-all", "please "+codexToolWord+" now")
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		if b, err := os.ReadFile(filepath.Join(r.cwd, "tool-proof.txt")); err != nil || string(b) != "ran\n" {
			t.Fatalf("the approved command did not run in the session cwd: %q, %v", b, err)
		}
		evs := r.events(id)
		assertNoSeqGap(t, evs)
		reqs, resolved := ofType(evs, eventlog.EventPermissionRequest), ofType(evs, eventlog.EventPermissionResolved)
		if len(reqs) != 1 || len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), `"allowed":true`) {
			t.Fatalf("permission events: %+v %+v", reqs, resolved)
		}
		if reqs[0].ToolCallID == "" || resolved[0].ToolCallID != reqs[0].ToolCallID {
			t.Fatalf("permission request and answer name different tool calls: %q, %q", reqs[0].ToolCallID, resolved[0].ToolCallID)
		}
		calls, results := ofType(evs, eventlog.EventToolCall), ofType(evs, eventlog.EventToolResult)
		if len(calls) == 0 || calls[0].ToolCallID != reqs[0].ToolCallID || !strings.Contains(string(calls[0].Input), "tool-proof.txt") {
			t.Fatalf("tool_call events: %+v", calls)
		}
		// codex-acp 2.x completes every call; the command's output comes in
		// the updates' _meta (terminal_output_delta): on the completion when
		// the command did not stream, else on the updates before it. kandev
		// records it either way. (0.16.0 often sent no completion at all.)
		if len(results) == 0 {
			t.Fatalf("no tool_result for tool call %s\nlog:\n%s", calls[0].ToolCallID, codexDump(evs))
		}
		output := ""
		for _, e := range append(calls, results...) {
			if e.ToolCallID == calls[0].ToolCallID {
				output += e.Content
			}
		}
		if last := results[len(results)-1]; last.ToolCallID != calls[0].ToolCallID || last.ToolStatus != "completed" || !strings.Contains(output, "TOOL-OUTPUT-42") {
			t.Fatalf("tool_result events: %+v (output recorded: %q)\nlog:\n%s", results, output, codexDump(evs))
		}
		if got := agentText(evs, "t1"); !strings.Contains(got, "tool done 2: TOOL-OUTPUT-42") {
			t.Fatalf("the answer after the tool: %q", got)
		}
		q := r.requests()
		if len(q) != 2 || !strings.Contains(q[1].input(), `"function_call_output"`) || !strings.Contains(q[1].input(), "TOOL-OUTPUT-42") || !strings.Contains(q[1].input(), calls[0].ToolCallID) {
			t.Fatalf("the model was not sent the output of tool call %s: %d requests", calls[0].ToolCallID, len(q))
		}
		if s := r.session(id); s.StopReason != "end_turn" {
			t.Fatalf("stop reason %q", s.StopReason)
		}
	})

	t.Run("deny-all refuses the command and codex aborts the turn", func(t *testing.T) {
		t.Parallel()
		r := newCodexRig(t, opts)
		id, res := r.start("--agent", "codex", "--permissions", "deny-all", "please "+codexToolWord+" now")
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		if _, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt")); err == nil {
			t.Fatal("the command ran although permission was denied")
		}
		evs := r.events(id)
		resolved := ofType(evs, eventlog.EventPermissionResolved)
		if len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), `"allowed":false`) {
			t.Fatalf("permission answers: %+v", resolved)
		}
		for _, q := range r.requests() {
			if strings.Contains(q.input(), "TOOL-OUTPUT-42") {
				t.Fatal("the model was sent output of a denied command")
			}
		}
		// Codex 0.16.0 offers one reject option, "abort", which ends the turn.
		if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
			t.Fatalf("record after the denial: state %s, stop %q", s.State, s.StopReason)
		}
	})
}

func TestCodex_NeverPromptedSessionFallsBackToANewCodexSession(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	id, res := r.start("--agent", "codex")
	if res.code != 0 {
		t.Fatalf("start without a prompt: %s", res)
	}
	oldToken := r.session(id).ResumeToken
	if oldToken == "" {
		t.Fatal("no resume token after an empty start")
	}
	if n := len(r.requests()); n != 0 {
		t.Fatalf("an empty start sent %d model requests", n)
	}

	prompt := "hello after an empty start"
	res = r.run("prompt", id, prompt)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := codexAgentStarts(evs)
	// codex-acp 0.16 answered -32002; 2.x says -32603 "no rollout found".
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32002") && !strings.Contains(starts[1].FallbackReason, "no rollout found") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	warned := false
	for _, m := range ofType(evs, eventlog.EventMarker) {
		warned = warned || m.Severity == "warning"
	}
	if !warned {
		t.Errorf("no warning marker about the session that could not be restored")
	}
	if got := agentText(evs, lastTurn(evs)); !strings.HasPrefix(got, "ack 1: ") {
		t.Fatalf("the answer after the fallback: %q", got)
	}
	s := r.session(id)
	if s.State != state.StateWaitingForInput || s.StopReason != "end_turn" || s.ResumeToken == "" || s.ResumeToken == oldToken {
		t.Fatalf("record after the fallback: state %s, stop %q, token %q (old %q)", s.State, s.StopReason, s.ResumeToken, oldToken)
	}
	reqs := r.requests()
	if len(reqs) != 1 || reqs[0].SessionID != s.ResumeToken {
		t.Fatalf("model requests: %+v, want one with session-id %q", reqs, s.ResumeToken)
	}
	// Nothing was said before, so there is no history to inject (docs/resume.md, "The resume context").
	if got := reqs[0].userTexts(); len(got) != 1 || got[0] != prompt {
		t.Errorf("the model was shown %q, want only the prompt (no resume context for a conversation without history)", got)
	}

	// The new Codex session was saved: the next process resumes it natively.
	res = r.run("prompt", id, "and once more")
	if res.code != 0 {
		t.Fatalf("third prompt: %s", res)
	}
	starts = codexAgentStarts(r.events(id))
	if last := starts[len(starts)-1]; last.Restore != "resume" {
		t.Fatalf("third agent_started: %+v", last)
	}
	if reqs := r.requests(); len(reqs) != 2 || !strings.Contains(reqs[1].input(), "ack 1: ") {
		t.Fatalf("the third prompt's request lacks the second turn")
	}
	r.assertNoAgentSurvives("the last prompt exited")
}
