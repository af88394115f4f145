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
	r.id++
	fmt.Fprintf(r.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", r.id, method, params)
	var notes []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		line, err := r.out.ReadString('\n')
		if err != nil {
			r.t.Fatalf("%s: %v", method, err)
		}
		if gjson.Get(line, "id").Int() == int64(r.id) && !gjson.Get(line, "method").Exists() {
			if e := gjson.Get(line, "error"); e.Exists() {
				r.t.Fatalf("%s: %s", method, e.Raw)
			}
			return gjson.Get(line, "result"), notes
		}
		if gjson.Get(line, "method").Str == "session/update" {
			notes = append(notes, line)
		}
	}
	r.t.Fatalf("%s: no answer", method)
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
