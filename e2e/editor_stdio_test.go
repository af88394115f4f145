package e2e_test

// kandev acp's stdio as a script or a hasty editor uses it: requests
// written all at once, then stdin closed; and a line too long to read.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// rpcLine is one JSON-RPC message as the editor side writes or reads it.
type rpcLine struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id,omitempty"`
	Method  string            `json:"method,omitempty"`
	Params  any               `json:"params,omitempty"`
	Result  json.RawMessage   `json:"result,omitempty"`
	Error   *sdk.RequestError `json:"error,omitempty"`
}

func request(id int, method string, params any) []byte {
	b, err := json.Marshal(rpcLine{JSONRPC: "2.0", ID: json.RawMessage(strings.TrimSpace(mustJSON(id))), Method: method, Params: params})
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// rawACP is kandev acp with its stdio in the test's hands.
type rawACP struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
}

func (w *world) rawACP() *rawACP {
	w.t.Helper()
	cmd := exec.Command(kandevBin, "acp")
	cmd.Dir, cmd.Env = w.cwd, w.env
	r := &rawACP{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r.out = bufio.NewScanner(out)
	r.out.Buffer(make([]byte, 0, 1<<20), 16<<20)
	return r
}

// answers reads messages until stdout ends and returns the responses by id.
func (r *rawACP) answers(t *testing.T) map[string]rpcLine {
	t.Helper()
	got := map[string]rpcLine{}
	for r.out.Scan() {
		var m rpcLine
		if err := json.Unmarshal(r.out.Bytes(), &m); err != nil {
			t.Fatalf("kandev acp wrote a line that is not JSON: %.200q", r.out.Text())
		}
		if m.Method == "" && m.ID != nil {
			got[string(m.ID)] = m
		}
	}
	return got
}

// next reads until the response to id.
func (r *rawACP) next(t *testing.T, id string) rpcLine {
	t.Helper()
	for r.out.Scan() {
		var m rpcLine
		if json.Unmarshal(r.out.Bytes(), &m) == nil && m.Method == "" && string(m.ID) == id {
			return m
		}
	}
	t.Fatalf("stdout ended before the answer to %s\n%s", id, r.stderr)
	return rpcLine{}
}

func (r *rawACP) exit(t *testing.T) int {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("kandev acp did not exit after stdin closed\n%s", r.stderr)
	}
	return r.cmd.ProcessState.ExitCode()
}

var initParams = sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}

func TestEditor_RequestsWrittenJustBeforeStdinClosesAreAllAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for run := 1; run <= 5; run++ {
		a := w.rawACP()
		a.stdin.Write(append(request(1, "initialize", initParams), request(2, "session/new", sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{}})...))
		a.stdin.Close()
		got := a.answers(t)
		code := a.exit(t)
		var created struct{ SessionID string }
		json.Unmarshal(got["2"].Result, &created)
		if got["1"].Result == nil || created.SessionID == "" || code != 0 {
			t.Fatalf("run %d: answers %s, exit %d: initialize and session/new must both be answered\n%s", run, mustJSON(got), code, a.stderr)
		}
		if s := w.session(created.SessionID); s.State != state.StateWaitingForInput {
			t.Fatalf("run %d: the new session is %s", run, s.State)
		}
		if a.stderr.Len() != 0 {
			t.Fatalf("run %d: kandev acp under an editor (stdin a pipe) wrote to stderr, which editors show as errors: %q", run, a.stderr)
		}
	}
}

func TestEditor_APromptWrittenJustBeforeStdinClosesRunsToItsEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.rawACP()
	a.stdin.Write(append(request(1, "initialize", initParams), request(2, "session/new", sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{}})...))
	var created struct{ SessionID string }
	json.Unmarshal(a.next(t, "2").Result, &created)
	a.stdin.Write(request(3, "session/prompt", sdk.PromptRequest{SessionId: sdk.SessionId(created.SessionID), Prompt: []sdk.ContentBlock{sdk.TextBlock("/sleep 500\nremember KIWI")}}))
	a.stdin.Close()
	got := a.answers(t)
	if code := a.exit(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, a.stderr)
	}
	var resp sdk.PromptResponse
	if err := json.Unmarshal(got["3"].Result, &resp); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the prompt read before EOF was answered %s, want end_turn\n%s", mustJSON(got["3"]), a.stderr)
	}
	evs := w.events(created.SessionID)
	if ended := ofType(evs, eventlog.EventTurnEnded); len(ended) != 1 || ended[0].StopReason != "end_turn" || !strings.Contains(agentText(evs, ""), "KIWI") {
		t.Fatalf("the turn in the log: %s", mustJSON(ended))
	}
}

func TestEditor_ALineOverTenMegabytesIsAnsweredWithAnErrorAndNothingElseIsLost(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.rawACP()
	a.stdin.Write(append(request(1, "initialize", initParams), request(2, "session/new", sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{}})...))
	var created struct{ SessionID string }
	json.Unmarshal(a.next(t, "2").Result, &created)
	id := sdk.SessionId(created.SessionID)
	huge := request(3, "session/prompt", sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(strings.Repeat("big ", 3<<20))}})
	go func() {
		a.stdin.Write(huge)
		a.stdin.Write(request(4, "session/prompt", sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("remember AFTER")}}))
		a.stdin.Close()
	}()
	got := a.answers(t)
	code := a.exit(t)
	refused := got["3"]
	if refused.Error == nil || refused.Error.Code != -32600 || !strings.Contains(refused.Error.Message, "refused") {
		t.Fatalf("the %d-byte request was answered %s, want an invalid-request error", len(huge), mustJSON(refused))
	}
	var resp sdk.PromptResponse
	if json.Unmarshal(got["4"].Result, &resp); resp.StopReason != sdk.StopReasonEndTurn || code != 0 {
		t.Fatalf("the prompt after it: %s, exit %d\n%s", mustJSON(got["4"]), code, a.stderr)
	}
	if !strings.Contains(a.stderr.String(), "kandev acp: message of") {
		t.Fatalf("stderr does not say what was refused: %q", a.stderr)
	}
	evs := w.events(created.SessionID)
	if n := len(ofType(evs, eventlog.EventTurnStarted)); n != 1 || !strings.Contains(agentText(evs, ""), "AFTER") {
		t.Fatalf("%d turns in the log, want only the prompt after the refused one", n)
	}
}

func TestEditor_AtATerminalKandevACPSaysWhatItIsOnStderr(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tm := newTmux(t, w, kandevBin+" acp")
	tm.waitScreen("kandev acp: this is kandev as an ACP agent for editors")
	tm.keys("C-d")
	tm.waitScreen("KANDEV-EXIT-0")
}

func TestEditor_SIGTERMMidTurnAnswersThePromptAndLeavesTheTurnForItsContinuation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	answered := make(chan error, 1)
	var stop sdk.StopReason
	go func() {
		var err error
		stop, err = ed.prompt(id, "remember FIG\n/sleep 30000")
		answered <- err
	}()
	w.waitForEvents(string(id), "the agent's first words", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventAgentMessage)) > 0
	})
	ed.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-answered:
		if err != nil || stop != sdk.StopReasonCancelled {
			t.Fatalf("the prompt SIGTERM cut short was answered stop %q, err %v", stop, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the prompt was not answered after SIGTERM\n%s", ed.stderr)
	}
	<-ed.exited
	if ed.code != 143 {
		t.Fatalf("kandev acp exit %d after SIGTERM, want 143\n%s", ed.code, ed.stderr)
	}
	ended := ofType(w.events(string(id)), eventlog.EventTurnEnded)
	if len(ended) != 1 || ended[0].StopReason != eventlog.StopShutdown {
		t.Fatalf("turn ends %s, want one shutdown", mustJSON(ended))
	}
	if s := w.session(string(id)); s.Interrupted == nil {
		t.Fatal("the turn SIGTERM cut short is not left for its continuation")
	}
}
