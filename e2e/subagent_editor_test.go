package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// rawEditor drives kandev acp with hand-written JSON-RPC lines, to see the
// updates the SDK's client does not type.
type rawEditor struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func (w *world) openRawEditor() *rawEditor {
	w.t.Helper()
	cmd := exec.Command(kandevBin, "acp")
	cmd.Dir, cmd.Env = w.cwd, w.env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() })
	return &rawEditor{t: w.t, in: in, out: bufio.NewReader(out)}
}

// call sends a request and returns its result, with every notification
// before it.
func (r *rawEditor) call(method, params string) (gjson.Result, []string) {
	r.t.Helper()
	return r.wait(r.send(method, params), nil)
}

// send sends a request and returns its id, without waiting for the answer.
func (r *rawEditor) send(method, params string) int {
	r.id++
	fmt.Fprintf(r.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", r.id, method, params)
	return r.id
}

// notify sends a notification.
func (r *rawEditor) notify(method, params string) {
	fmt.Fprintf(r.in, `{"jsonrpc":"2.0","method":%q,"params":%s}`+"\n", method, params)
}

// wait reads up to the answer to request id and returns it, with every
// notification before it; until, when set, is shown each notification and
// ends the wait early (with no result) when it returns true.
func (r *rawEditor) wait(id int, until func(note string) bool) (gjson.Result, []string) {
	r.t.Helper()
	var notes []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		line, err := r.out.ReadString('\n')
		if err != nil {
			r.t.Fatalf("request %d: %v", id, err)
		}
		if gjson.Get(line, "id").Int() == int64(id) && !gjson.Get(line, "method").Exists() {
			if e := gjson.Get(line, "error"); e.Exists() {
				r.t.Fatalf("request %d: %s", id, e.Raw)
			}
			return gjson.Get(line, "result"), notes
		}
		if gjson.Get(line, "method").Str == "session/update" {
			notes = append(notes, line)
			if until != nil && until(line) {
				return gjson.Result{}, notes
			}
		}
	}
	r.t.Fatalf("request %d: no answer", id)
	return gjson.Result{}, nil
}

func TestSubagent_AnEditorIsShownTheChildAsItDeclared(t *testing.T) {
	t.Parallel()
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			caps := `{}`
			if declared {
				caps = `{"subagents":{}}`
			}
			ed := w.openRawEditor()
			ed.call("initialize", `{"protocolVersion":1,"clientCapabilities":`+caps+`}`)
			res, _ := ed.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, w.cwd))
			sid := res.Get("sessionId").Str
			text, _ := json.Marshal("/subagent scout /say found it\n/say back")
			_, notes := ed.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+string(text)+`}]}`)
			var kinds []string
			var childText, folded string
			for _, n := range notes {
				on, kind := gjson.Get(n, "params.sessionId").Str, gjson.Get(n, "params.update.sessionUpdate").Str
				who := "parent"
				if on != sid {
					who = "child"
					if kind == "agent_message_chunk" {
						childText += gjson.Get(n, "params.update.content.text").Str
					}
				}
				if kind == "tool_call_update" && gjson.Get(n, "params.update.status").Str == "completed" {
					folded = gjson.Get(n, "params.update.content.0.content.text").Str
				}
				shown := strings.HasPrefix(kind, "subagent") || kind == "session_message" || who == "child" || strings.HasPrefix(kind, "tool_call")
				if shown && (len(kinds) == 0 || kinds[len(kinds)-1] != who+":"+kind) {
					kinds = append(kinds, who+":"+kind)
				}
			}
			if declared {
				want := "parent:subagent_update child:session_message child:agent_message_chunk parent:subagent_update"
				if strings.Join(kinds, " ") != want || childText != "found it" {
					t.Fatalf("updates %v (child text %q), want %s", kinds, childText, want)
				}
				return
			}
			if strings.Join(kinds, " ") != "parent:tool_call parent:tool_call_update" || folded != "found it" {
				t.Fatalf("updates %v, folded %q", kinds, folded)
			}
		})
	}
}

// An editor that declared subagents cancels a child through the child
// session it was shown: that child is cancelled as kandev cancel --child
// does, and its parent's turn goes on; a cancel of an id that is neither a
// session nor a child is ignored.
func TestSubagent_AnEditorCancellingAChildSessionCancelsThatChild(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openRawEditor()
	ed.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}`)
	res, _ := ed.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, w.cwd))
	sid := res.Get("sessionId").Str
	prompt := func(text string) int {
		b, _ := json.Marshal(text)
		return ed.send("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+string(b)+`}]}`)
	}
	turn := prompt("/subagent scout /sleep 60000;/say never\n/say after the scout")
	child := ""
	ed.wait(turn, func(n string) bool {
		child = gjson.Get(n, "params.update.sessionId").Str
		return gjson.Get(n, "params.update.sessionUpdate").Str == "subagent_update" && child != ""
	})
	if child == "" {
		t.Fatal("the editor was not shown the child")
	}
	ed.notify("session/cancel", `{"sessionId":"`+child+`"}`)
	out, notes := ed.wait(turn, nil)
	if stop := out.Get("stopReason").Str; stop != "end_turn" {
		t.Fatalf("the parent's turn stopped %q: cancelling its child cancelled it", stop)
	}
	shown := false
	for _, n := range notes {
		u := gjson.Get(n, "params.update")
		if u.Get("sessionUpdate").Str == "subagent_update" && u.Get("sessionId").Str == child && u.Get("state.stopReason").Str == "cancelled" {
			shown = true
		}
	}
	if got := childEnd(w.events(sid), child); got != "cancelled" || !shown {
		t.Fatalf("the child ended %q in the log (shown to the editor: %v)", got, shown)
	}
	if got := agentText(w.events(sid), lastTurn(w.events(sid))); got != "after the scout" {
		t.Fatalf("the parent's text %q", got)
	}
	ed.notify("session/cancel", `{"sessionId":"no-such-session"}`)
	if out, _ := ed.wait(prompt("/say still here"), nil); out.Get("stopReason").Str != "end_turn" {
		t.Fatalf("after a cancel of nothing: %s", out.Raw)
	}
}
