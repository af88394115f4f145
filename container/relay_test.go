package container

import (
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

// nopWriter is the agent's stdin in these tests: it keeps what it got.
type nopWriter struct{ lines []string }

func (w *nopWriter) Write(p []byte) (int, error) {
	w.lines = append(w.lines, string(p))
	return len(p), nil
}
func (w *nopWriter) Close() error { return nil }

func newTestRelay() (*relay, *nopWriter) {
	in := &nopWriter{}
	r := &relay{stdin: in, ids: map[int64]request{}, pending: map[string][]byte{}, nextID: 1}
	r.cond = sync.NewCond(&r.mu)
	return r, in
}

func (r *relay) agentWrites(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := []byte(line + "\n")
	r.noteAgentLine(b)
	r.lines = append(r.lines, b)
	r.size += len(b)
}

func TestRelay_ALaterClientsIDsNeverCollideAndADeadClientsAnswerComesAsOrphan(t *testing.T) {
	r, agent := newTestRelay()
	// Client 1 prompts with id 1, then dies.
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`+"\n"), 1, 0, 0)
	// Client 2 (its SDK counts from 1 again) asks something else with id 1.
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`+"\n"), 2, 0, 0)
	first, second := gjson.Get(agent.lines[0], "id").Int(), gjson.Get(agent.lines[1], "id").Int()
	if first == second {
		t.Fatalf("the agent got id %d twice", first)
	}
	r.mu.Lock()
	toOld := string(r.toClient([]byte(`{"jsonrpc":"2.0","id":`+gjson.Get(agent.lines[0], "id").Raw+`,"result":{"stopReason":"end_turn"}}`+"\n"), 2))
	toNew := string(r.toClient([]byte(`{"jsonrpc":"2.0","id":`+gjson.Get(agent.lines[1], "id").Raw+`,"result":{}}`+"\n"), 2))
	r.mu.Unlock()
	if gjson.Get(toOld, "method").String() != MethodOrphan || gjson.Get(toOld, "params.method").String() != "session/prompt" ||
		gjson.Get(toOld, "params.id").Raw != gjson.Get(agent.lines[0], "id").Raw ||
		gjson.Get(toOld, "params.response.result.stopReason").String() != "end_turn" {
		t.Fatalf("the dead client's answer reached client 2 as %s", toOld)
	}
	if gjson.Get(toNew, "id").Int() != 1 || gjson.Get(toNew, "method").Exists() {
		t.Fatalf("client 2's own answer reached it as %s", toNew)
	}
}

func TestRelay_AcknowledgedLinesAreDroppedAndUnansweredRequestsAreKept(t *testing.T) {
	r, _ := newTestRelay()
	r.agentWrites(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	r.agentWrites(`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{}}`)
	r.agentWrites(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	// The client recorded all three lines, but never answered the request.
	r.fromClient([]byte(`{"jsonrpc":"2.0","method":"`+MethodAck+`","params":{"lines":3}}`+"\n"), 1, 0, 0)
	if r.acked != 3 || len(r.lines) != 0 || r.size != 0 {
		t.Fatalf("acked %d, %d lines (%d bytes) kept, want all three dropped", r.acked, len(r.lines), r.size)
	}
	if len(r.pending) != 1 || !strings.Contains(string(r.pending["7"]), "request_permission") {
		t.Fatalf("the unanswered request is not kept for the next client: %v", r.pending)
	}
	// The next client answers it: no longer pending.
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"cancelled"}}}`+"\n"), 2, 3, 1)
	if len(r.pending) != 0 {
		t.Fatalf("an answered request is still pending: %v", r.pending)
	}
}

func TestRelay_AnAckBeyondWhatWasWrittenIsIgnored(t *testing.T) {
	r, _ := newTestRelay()
	r.agentWrites(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	r.fromClient([]byte(`{"jsonrpc":"2.0","method":"`+MethodAck+`","params":{"lines":5}}`+"\n"), 1, 0, 0)
	if r.acked != 0 || len(r.lines) != 1 {
		t.Fatalf("acked %d of 1 line", r.acked)
	}
}

func TestRelay_TheNextClientIsToldTheNewestPromptAndGetsTheAcknowledgedRequestAgain(t *testing.T) {
	r, agent := newTestRelay()
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n"), 1, 0, 0)
	r.agentWrites(`{"jsonrpc":"2.0","id":` + gjson.Get(agent.lines[0], "id").Raw + `,"result":{}}`)
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`+"\n"), 1, 0, 0)
	r.agentWrites(`{"jsonrpc":"2.0","id":` + gjson.Get(agent.lines[1], "id").Raw + `,"result":{"stopReason":"end_turn"}}`)
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}`+"\n"), 1, 0, 0)
	r.agentWrites(`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{}}`)
	// The client recorded the first turn's answer and the request, then died.
	r.fromClient([]byte(`{"jsonrpc":"2.0","method":"`+MethodAck+`","params":{"lines":3}}`+"\n"), 1, 0, 0)
	r.mu.Lock()
	hello, resent := r.helloFor(2)
	r.mu.Unlock()
	if !hello.Initialized || hello.Prompt != gjson.Get(agent.lines[2], "id").Int() {
		t.Fatalf("hello %+v, want initialized and the second prompt (%s)", hello, gjson.Get(agent.lines[2], "id").Raw)
	}
	if len(resent) != 1 || !strings.Contains(string(resent[0]), "request_permission") || hello.Resent != 1 {
		t.Fatalf("resent %q, want the unanswered permission request", resent)
	}
}
