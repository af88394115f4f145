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

// TestRelay_ALineOverTheBoundIsNeverJournaledAndItsSenderIsAnswered: the
// agent writes lines far over the relay's line bound (lowered here from
// rpcwire.MaxLine): a notification is dropped, an answer to a client's
// request becomes an error answer for that client, and a request of the
// agent's own is answered with an error on its stdin. None of them is kept,
// so none is replayed to a later client, and the journal stays small.
func TestRelay_ALineOverTheBoundIsNeverJournaledAndItsSenderIsAnswered(t *testing.T) {
	r, agent := newTestRelay()
	r.maxLine = 1 << 10
	var errlog strings.Builder
	r.errlog = &errlog
	r.fromClient([]byte(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{}}`+"\n"), 1, 0, 0)
	big := strings.Repeat("x", 4<<20)
	out := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"text":"small"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"text":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{"content":"` + big + `"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"text":"after"}}`,
	}, "\n") + "\n"
	r.readAgent(strings.NewReader(out))
	if len(r.lines) != 3 {
		t.Fatalf("journal holds %d lines, want 3 (small, the error answer, after)", len(r.lines))
	}
	if r.size > 4<<10 {
		t.Fatalf("the journal holds %d bytes after lines of 4 MiB were refused", r.size)
	}
	answer := string(r.lines[1])
	if gjson.Get(answer, "id").Int() != 1 || !strings.Contains(gjson.Get(answer, "error.message").String(), "refused") {
		t.Fatalf("the client's request got %s in place of its oversized answer", answer)
	}
	if got := agent.lines[len(agent.lines)-1]; gjson.Get(got, "id").String() != "w1" || !gjson.Get(got, "error").Exists() {
		t.Fatalf("the agent's oversized request was answered with %s", got)
	}
	if n := strings.Count(errlog.String(), "\n"); n != 3 || !strings.Contains(errlog.String(), "1024 bytes") {
		t.Fatalf("agent.err says %q, want one line per refused message", errlog.String())
	}
	r.mu.Lock()
	hello, _ := r.helloFor(2)
	r.mu.Unlock()
	if hello.Replayed != 3 {
		t.Fatalf("a later client would be replayed %d lines, want 3", hello.Replayed)
	}
}
