package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// rawPeer drives the agent with hand-written JSON-RPC lines, to see the
// updates the SDK does not type.
type rawPeer struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Reader
	id  int
}

func startRaw(t *testing.T, caps string) *rawPeer {
	t.Helper()
	return startRawIn(t, t.TempDir(), caps)
}

// startRawIn is startRaw with the agent's session files in dir.
func startRawIn(t *testing.T, dir, caps string) *rawPeer {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = Run(ctx, Options{Dir: dir}, agentIn, agentOut); close(done) }()
	t.Cleanup(func() {
		cancel()
		clientOut.Close()
		agentOut.Close()
		<-done
	})
	p := &rawPeer{t: t, in: clientOut, out: bufio.NewReader(clientIn)}
	p.call("initialize", `{"protocolVersion":1,"clientCapabilities":`+caps+`}`, nil)
	return p
}

// call sends a request and returns its result, handing every notification
// before it to seen.
func (p *rawPeer) call(method, params string, seen func(line string)) gjson.Result {
	p.t.Helper()
	p.id++
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.id, method, params)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("%s: %v", method, err)
		}
		if gjson.Get(line, "id").Int() == int64(p.id) && !gjson.Get(line, "method").Exists() {
			if e := gjson.Get(line, "error"); e.Exists() {
				p.t.Fatalf("%s: %s", method, e.Raw)
			}
			return gjson.Get(line, "result")
		}
		if seen != nil && gjson.Get(line, "method").Str == "session/update" {
			seen(line)
		}
	}
	p.t.Fatalf("%s: no answer", method)
	return gjson.Result{}
}

func (p *rawPeer) prompt(session, text string) (stop string, lines []string) {
	b, _ := json.Marshal(text)
	r := p.call("session/prompt", `{"sessionId":"`+session+`","prompt":[{"type":"text","text":`+string(b)+`}]}`,
		func(l string) { lines = append(lines, l) })
	return r.Get("stopReason").Str, lines
}

func TestSubagent_DeclaredClientGetsTheChildAsItsOwnSession(t *testing.T) {
	t.Parallel()
	p := startRaw(t, `{"subagents":{}}`)
	parent := p.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`, nil).Get("sessionId").Str
	stop, lines := p.prompt(parent, "/subagent scout /say found it;/think hmm\n/say back")
	if stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	var child string
	var kinds []string
	childText := ""
	for _, l := range lines {
		sid, kind := gjson.Get(l, "params.sessionId").Str, gjson.Get(l, "params.update.sessionUpdate").Str
		if kind == "subagent_update" && child == "" {
			child = gjson.Get(l, "params.update.sessionId").Str
			if gjson.Get(l, "params.update.title").Str != "scout" || gjson.Get(l, "params.update.state.state").Str != "running" ||
				!gjson.Get(l, "params.update.capabilities.cancel").IsObject() {
				t.Fatalf("announcement %s", l)
			}
		}
		who := "parent"
		if sid == child && child != "" {
			who = "child"
			if kind == "agent_message_chunk" {
				childText += gjson.Get(l, "params.update.content.text").Str
			}
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != who+":"+kind {
			kinds = append(kinds, who+":"+kind)
		}
	}
	want := []string{"parent:subagent_update", "parent:session_message", "child:session_message", "child:agent_message_chunk",
		"child:agent_thought_chunk", "parent:subagent_update", "parent:session_message", "parent:agent_message_chunk", "parent:usage_update"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("updates\n got %v\nwant %v", kinds, want)
	}
	if childText != "found it" {
		t.Fatalf("child text %q", childText)
	}
	for _, l := range lines {
		if gjson.Get(l, "params.update.sessionUpdate").Str == "subagent_update" && gjson.Get(l, "params.update.state.state").Str == "idle" {
			if r := gjson.Get(l, "params.update.state.stopReason").Str; r != "end_turn" {
				t.Fatalf("child ended %q", r)
			}
		}
	}
}

func TestSubagent_UndeclaredClientGetsOneFoldedToolCall(t *testing.T) {
	t.Parallel()
	p := startRaw(t, `{}`)
	parent := p.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`, nil).Get("sessionId").Str
	_, lines := p.prompt(parent, "/subagent scout /say found it")
	var content string
	for _, l := range lines {
		if gjson.Get(l, "params.sessionId").Str != parent {
			t.Fatalf("an update for another session: %s", l)
		}
		if k := gjson.Get(l, "params.update.sessionUpdate").Str; strings.HasPrefix(k, "subagent") || k == "session_message" {
			t.Fatalf("a subagent update to an undeclared client: %s", l)
		}
		if gjson.Get(l, "params.update.status").Str == "completed" {
			content = gjson.Get(l, "params.update.content.0.content.text").Str
		}
	}
	if content != "found it" {
		t.Fatalf("folded content %q in %v", content, lines)
	}
}

func TestSubagent_BackgroundChildOutlivesTheTurnAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	p := startRaw(t, `{"subagents":{}}`)
	parent := p.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`, nil).Get("sessionId").Str
	stop, lines := p.prompt(parent, "/subagent-bg watcher /sleep 60000;/say never")
	if stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	var child string
	for _, l := range lines {
		if gjson.Get(l, "params.update.sessionUpdate").Str == "subagent_update" {
			child = gjson.Get(l, "params.update.sessionId").Str
			if s := gjson.Get(l, "params.update.state.state").Str; s != "running" {
				t.Fatalf("the background child ended with its turn: %s", l)
			}
		}
	}
	if child == "" {
		t.Fatal("no child announced")
	}
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", child)
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if gjson.Get(line, "params.update.sessionUpdate").Str == "subagent_update" {
			if r := gjson.Get(line, "params.update.state.stopReason").Str; r != "cancelled" {
				t.Fatalf("cancelled child ended %q", line)
			}
			return
		}
	}
}
