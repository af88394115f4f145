package e2e_test

// The editor front end driven across editor restarts: by the ACP Go SDK's
// client side, by the TypeScript ACP SDK's client side (a node script in
// testdata/tsclient), and with the real codex-acp behind kandev acp.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

func TestEditor_ReopenedEditorListsLoadsReplaysAndRecallsItsSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("the notes"), 0o600)
	prompt := "remember PINEAPPLE\n/think deep thought\n/read notes.txt\n/say hello again"
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	ed.mustPrompt(id, prompt)
	streamed := chunkText(ed.take(id), "agent")
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}

	// A new editor process: the session is listed for this cwd, and loads.
	ed2 := w.openEditor()
	ed2.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	list, err := ed2.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &w.cwd})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "remember PINEAPPLE" {
		t.Fatalf("the reopened editor lists %s (%v), want only %s titled by its first prompt", mustJSON(list), err, id)
	}
	began := time.Now()
	ed2.load(id, w.cwd)
	ups := ed2.take(id)
	t.Logf("reopened editor: load replayed %d updates and restored the agent in %s", len(ups), time.Since(began))
	if got := chunkText(ups, "user"); got != prompt {
		t.Fatalf("replayed user text %q, want %q", got, prompt)
	}
	if got := chunkText(ups, "agent"); got != streamed || !strings.Contains(got, "hello again") {
		t.Fatalf("replayed agent text %q, the first editor was shown %q", got, streamed)
	}
	if got := chunkText(ups, "thought"); got != "deep thought" {
		t.Fatalf("replayed thought %q", got)
	}
	if !replayedFinishedToolCall(ups, sdk.ToolKindRead) {
		t.Fatalf("replay lacks the read tool call and its result: %s", mustJSON(ups))
	}
	ed2.mustPrompt(id, "recall")
	if got := chunkText(ed2.take(id), "agent"); !strings.Contains(got, "PINEAPPLE") {
		t.Fatalf("recall in the reopened editor: %q", got)
	}
	if code := ed2.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed2.stderr)
	}
	if n := len(ofType(w.events(string(id)), eventlog.EventTurnStarted)); n != 2 {
		t.Fatalf("%d turns, want 2: loading must not run one", n)
	}
}

// replayedFinishedToolCall reports whether ups hold a tool call of kind and,
// after it, its completion.
func replayedFinishedToolCall(ups []sdk.SessionUpdate, kind sdk.ToolKind) bool {
	var started bool
	for _, u := range ups {
		started = started || u.ToolCall != nil && u.ToolCall.Kind == kind
		if started && u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted {
			return true
		}
	}
	return false
}

// tsReport is what testdata/tsclient/client.mjs prints.
type tsReport struct {
	Capabilities struct {
		LoadSession         bool
		SessionCapabilities map[string]json.RawMessage
	}
	AgentName  string
	SessionID  string
	Listed     []struct{ SessionID, Title, UpdatedAt string }
	LoadMs     int
	Replay     []tsUpdate
	StopReason string
	Turn       []tsUpdate
	ExitCode   json.RawMessage // kandev acp's exit code, or the signal that ended it
	// UpdatedSessions are the sessions the client got updates for.
	UpdatedSessions []string
	// Setup is the agent's setup in the new or load answer; SetOptions the
	// options set_config_option answered with.
	Setup struct {
		Modes         *sdk.SessionModeState
		Models        json.RawMessage // the field ACP removed: never sent
		ConfigOptions []sdk.SessionConfigOption
	}
	SetOptions []sdk.SessionConfigOption
}

type tsUpdate struct {
	Kind, Text, Status string
}

// tsText concatenates the text of the updates of one kind.
func tsText(ups []tsUpdate, kind string) string {
	var b strings.Builder
	for _, u := range ups {
		if u.Kind == kind {
			b.WriteString(u.Text)
		}
	}
	return b.String()
}

func tsCount(ups []tsUpdate, kind, status string) int {
	n := 0
	for _, u := range ups {
		if u.Kind == kind && (status == "" || u.Status == status) {
			n++
		}
	}
	return n
}

// runTSClient runs the TypeScript SDK editor in the world's cwd, which starts
// its own kandev acp, and returns its report.
func (w *world) runTSClient(args ...string) tsReport {
	w.t.Helper()
	example := installTSExampleAgent(w.t) // node and the SDK's example agent
	acpJS := filepath.Join(filepath.Dir(filepath.Dir(example[1])), "acp.js")
	script, _ := filepath.Abs("../testdata/tsclient/client.mjs")
	cmd := exec.Command(example[0], append([]string{script}, args...)...)
	cmd.Dir = w.cwd
	cmd.Env = append(w.env, "KANDEV_TS_SDK="+acpJS, "KANDEV_BIN="+kandevBin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("TypeScript SDK client %v: %v\n%s", args, err, stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(out, &r); err != nil {
		w.t.Fatalf("TypeScript SDK client printed %d bytes that do not parse (%v), ending %q\n%s", len(out), err, out[max(0, len(out)-200):], stderr.String())
	}
	if len(r.UpdatedSessions) > 1 || len(r.UpdatedSessions) == 1 && r.UpdatedSessions[0] != r.SessionID {
		w.t.Fatalf("updates for sessions %v, the client used %s", r.UpdatedSessions, r.SessionID)
	}
	if string(r.ExitCode) != "0" {
		w.t.Fatalf("kandev acp under the TypeScript SDK client exited %s\n%s", r.ExitCode, stderr.String())
	}
	return r
}

func TestEditor_TypeScriptSDKClientCreatesThenReopensLoadsAndRecalls(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("the notes"), 0o600)
	prompt := "remember PINEAPPLE\n/think deep thought\n/read notes.txt\n/bulk 10000"
	began := time.Now()
	first := w.runTSClient("first", prompt)
	t.Logf("TypeScript client, first process: %d updates streamed in %s", len(first.Turn), time.Since(began))
	caps := first.Capabilities
	if !caps.LoadSession || caps.SessionCapabilities["list"] == nil || caps.SessionCapabilities["resume"] == nil || caps.SessionCapabilities["close"] == nil || first.AgentName != "kandev" {
		t.Fatalf("initialize as the TypeScript client read it: %+v, agent %q", caps, first.AgentName)
	}
	evs := w.events(first.SessionID)
	streamed := tsText(first.Turn, "agent_message_chunk")
	if first.StopReason != "end_turn" || streamed != agentText(evs, "") || tsCount(first.Turn, "agent_message_chunk", "") < 10000 {
		t.Fatalf("first turn: stop %q, %d chunks, text shown %d bytes, logged %d", first.StopReason, tsCount(first.Turn, "agent_message_chunk", ""), len(streamed), len(agentText(evs, "")))
	}

	// A new node process, a new kandev acp.
	second := w.runTSClient("reopen", first.SessionID, "recall")
	t.Logf("TypeScript client, second process: session/load replayed %d updates in %d ms", len(second.Replay), second.LoadMs)
	if len(second.Listed) != 1 || second.Listed[0].SessionID != first.SessionID || second.Listed[0].Title != "remember PINEAPPLE" || second.Listed[0].UpdatedAt == "" {
		t.Fatalf("session/list from the new process: %+v", second.Listed)
	}
	r := second.Replay
	if got := tsText(r, "user_message_chunk"); got != prompt {
		t.Fatalf("replayed user text %q", got)
	}
	if got := tsText(r, "agent_message_chunk"); got != streamed {
		t.Fatalf("replayed agent text differs from what was streamed (%d vs %d bytes)", len(got), len(streamed))
	}
	if got := tsText(r, "agent_thought_chunk"); got != "deep thought" {
		t.Fatalf("replayed thought %q", got)
	}
	if tsCount(r, "tool_call", "") != 1 || tsCount(r, "tool_call_update", "completed") != 1 || len(r) > 50 {
		t.Fatalf("replay of %d updates: %d tool calls, %d completed", len(r), tsCount(r, "tool_call", ""), tsCount(r, "tool_call_update", "completed"))
	}
	if second.StopReason != "end_turn" || !strings.Contains(tsText(second.Turn, "agent_message_chunk"), "PINEAPPLE") {
		t.Fatalf("recall: stop %q, %+v", second.StopReason, second.Turn)
	}
}

func TestEditor_CodexBehindKandevACPIsLoadedInANewProcessWithItsContext(t *testing.T) {
	t.Parallel()
	r := newCodexRig(t, codexOptions{})
	first := "remember the word PAPAYA for later"
	ed := r.openEditor("--agent", "codex")
	ed.initialize()
	id := ed.newSession(r.cwd)
	ed.mustPrompt(id, first)
	if got := chunkText(ed.take(id), "agent"); got != "ack 1: "+first {
		t.Fatalf("the editor was shown %q", got)
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
	r.assertNoAgentSurvives("the first kandev acp exited")
	token := r.session(string(id)).ResumeToken
	if token == "" {
		t.Fatal("no codex session id recorded after the first turn")
	}

	ed2 := r.openEditor("--agent", "codex")
	ed2.initialize()
	began := time.Now()
	ed2.load(id, r.cwd)
	ups := ed2.take(id)
	t.Logf("codex behind kandev acp: load replayed %d updates and restored codex in %s", len(ups), time.Since(began))
	if chunkText(ups, "user") != first || chunkText(ups, "agent") != "ack 1: "+first {
		t.Fatalf("replay: user %q, agent %q", chunkText(ups, "user"), chunkText(ups, "agent"))
	}
	second := "which word did I ask you to remember"
	ed2.mustPrompt(id, second)
	if got := chunkText(ed2.take(id), "agent"); got != "ack 2: "+second {
		t.Fatalf("second turn shown as %q", got)
	}
	ed2.quit()
	r.assertNoAgentSurvives("the second kandev acp exited")

	starts := codexAgentStarts(r.events(string(id)))
	if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != "resume" || starts[1].FallbackReason != "" {
		t.Fatalf("agent_started events: %s", mustJSON(starts))
	}
	// The model saw the first turn when it answered the second.
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	q := reqs[1]
	if q.SessionID != token {
		t.Fatalf("second request under codex session %q, want %q", q.SessionID, token)
	}
	if got := q.userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q", got)
	}
	if !strings.Contains(q.input(), "ack 1: "+first) {
		t.Fatalf("the first answer is missing from the second request's input:\n%s", q.input())
	}
}
