package e2e_test

// The fake model server speaking OpenAI Chat Completions as the suites
// of agents that speak that API use it: built once, one server per rig, and
// its request log read back so a test can check what the model was shown.

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/internal/fakemodel"
)

// fakeChat is one running fake server and its request log.
type fakeChat struct {
	t      *testing.T
	URL    string // the base URL, "http://127.0.0.1:PORT/v1"
	reqLog string
}

// startFakeChat starts the fake model server for chat with args (see
// internal/fakemodel),
// stopped with the test (and by itself when idle).
func startFakeChat(t *testing.T, args ...string) *fakeChat {
	t.Helper()
	f := &fakeChat{t: t}
	f.URL, f.reqLog = startFakeModel(t, "chat", args...)
	return f
}

// chatRequest is one request the fake server received.
type chatRequest struct {
	N      int    `json:"n"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Tools  bool   `json:"tools"` // false for side requests (a title, a summary)
	Body   struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"-"`
	RawBody json.RawMessage `json:"body"` // null for a request without a body
}

// input is the request's whole conversation (tool calls and results
// included) as one string, for searching.
func (q chatRequest) input() string {
	var b strings.Builder
	for _, m := range q.Body.Messages {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// userTexts are the texts of the user messages the model was shown, in
// order, each without the context blocks an agent puts before what the user
// typed (Copilot's <current_datetime>), as the fake server reads them.
func (q chatRequest) userTexts() []string {
	out := q.texts("user")
	for i, s := range out {
		out[i] = fakemodel.WithoutContext(s)
	}
	return out
}

// toolResults are the texts of the tool results the model was shown, in order.
func (q chatRequest) toolResults() []string { return q.texts("tool") }

func (q chatRequest) texts(role string) []string {
	var out []string
	for _, raw := range q.Body.Messages {
		var m struct {
			Role    string
			Content json.RawMessage
		}
		json.Unmarshal(raw, &m)
		if m.Role != role {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var parts []struct{ Text string }
			json.Unmarshal(m.Content, &parts)
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Text)
			}
			s = b.String()
		}
		out = append(out, s)
	}
	return out
}

// all is every request logged so far, model calls or not.
func (f *fakeChat) all() []chatRequest {
	f.t.Helper()
	out := readRequestLog[chatRequest](f.t, f.reqLog, nil)
	for i := range out {
		if bytes.HasPrefix(out[i].RawBody, []byte("{")) {
			json.Unmarshal(out[i].RawBody, &out[i].Body)
		}
	}
	return out
}

// turns are the chat completion requests that offered tools: the agent's own
// turns, without its side requests.
func (f *fakeChat) turns() []chatRequest {
	var out []chatRequest
	for _, q := range f.all() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/chat/completions") && q.Tools {
			out = append(out, q)
		}
	}
	return out
}
