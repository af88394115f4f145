package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newServer is a Server for format with the program's default flags and
// then set applied, logging to a file it returns.
func newServer(t *testing.T, format string, set func(*Server)) (*Server, string) {
	t.Helper()
	s := &Server{Format: format, MCPWord: "MCPNOTE", ToolCmd: "echo fake-tool-ran", Title: "Fake model title"}
	if set != nil {
		set(s)
	}
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := s.Init(logPath, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.log.f.Close() })
	return s, logPath
}

// post sends body to path and returns the recorded answer.
func post(s *Server, path, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
	raw  string
}

// events reads an event stream, checking its content type.
func events(t *testing.T, w *httptest.ResponseRecorder) []event {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" || w.Code != 200 {
		t.Fatalf("status %d, content type %q, want a 200 event stream: %s", w.Code, ct, w.Body)
	}
	var out []event
	var cur event
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.raw = strings.TrimPrefix(line, "data: ")
			json.Unmarshal([]byte(cur.raw), &cur.data)
		case line == "" && cur.raw != "":
			out = append(out, cur)
			cur = event{}
		}
	}
	return out
}

// logLines reads the request log.
func logLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func jsonOf(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 200 {
		t.Fatalf("status %d, body %q: want one JSON object (%v)", w.Code, w.Body, err)
	}
	return m
}

func TestInit_RefusesAnUnknownFormatNamingTheKnownOnes(t *testing.T) {
	err := (&Server{Format: "bard"}).Init("", "")
	if err == nil || !strings.Contains(err.Error(), "messages, responses, chat or gemini") {
		t.Fatalf("Init: %v", err)
	}
}

func TestMessages_StreamsTheAckOneWordPerDeltaAndLogsTheBetaHeader(t *testing.T) {
	s, logPath := newServer(t, "messages", nil)
	body := `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hello there"}]}]}`
	evs := events(t, post(s, "/v1/messages", body, "anthropic-beta", "fast-mode"))
	var names, text []string
	for _, e := range evs {
		names = append(names, e.name)
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text = append(text, d["text"].(string))
		}
	}
	if got := strings.Join(text, ""); got != "ack 1: hello there" || len(text) != 4 {
		t.Fatalf("text deltas %q, want the ack one word each", text)
	}
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events %v", names)
	}
	if l := logLines(t, logPath)[0]; l["n"] != 1.0 || l["beta"] != "fast-mode" || l["path"] != "/v1/messages" {
		t.Fatalf("log line %v", l)
	}
}

func TestMessages_SideRequestsAreNotNumberedAndTheTitleRequestGetsTheTitle(t *testing.T) {
	s, logPath := newServer(t, "messages", func(s *Server) { s.Title = "Login bug" })
	title := `{"model":"m","messages":[{"role":"user","content":"name this"}],"output_config":{"format":{"schema":{"properties":{"title":{}}}}}}`
	m := jsonOf(t, post(s, "/v1/messages", title))
	if c := m["content"].([]any)[0].(map[string]any); c["text"] != `{"title":"Login bug"}` || m["stop_reason"] != "end_turn" {
		t.Fatalf("title answer %v", m)
	}
	loop := `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`
	m = jsonOf(t, post(s, "/v1/messages", loop))
	if c := m["content"].([]any)[0].(map[string]any); c["text"] != "ack 1: go" {
		t.Fatalf("the loop's first request: %v", m)
	}
	if ls := logLines(t, logPath); ls[0]["n"] != 0.0 || ls[1]["n"] != 1.0 {
		t.Fatalf("log numbers %v, %v: want 0 for the side request", ls[0]["n"], ls[1]["n"])
	}
}

func TestMessages_ToolWordCallsBashAndItsResultIsAnswered(t *testing.T) {
	s, _ := newServer(t, "messages", func(s *Server) { s.ToolWord = "RUNIT" })
	m := jsonOf(t, post(s, "/v1/messages", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"please RUNIT"}]}`))
	c := m["content"].([]any)[0].(map[string]any)
	if c["type"] != "tool_use" || c["name"] != "Bash" || c["input"].(map[string]any)["command"] != "echo fake-tool-ran" || m["stop_reason"] != "tool_use" {
		t.Fatalf("tool answer %v", m)
	}
	res := `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"please RUNIT"},{"role":"assistant","content":[]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"header\nfake-tool-ran"}]}]}]}`
	m = jsonOf(t, post(s, "/v1/messages", res))
	if c := m["content"].([]any)[0].(map[string]any); c["text"] != "tool done 2: fake-tool-ran" {
		t.Fatalf("answer to the result %v", m)
	}
}

func TestMessages_MCPWordCallsTheOfferedMCPToolWithTheRestOfTheLine(t *testing.T) {
	s, _ := newServer(t, "messages", nil)
	evs := events(t, post(s, "/v1/messages", `{"stream":true,"tools":[{"name":"mcp__notes__append"}],"messages":[{"role":"user","content":"please MCPNOTE buy milk\nthanks"}]}`))
	var start, input string
	for _, e := range evs {
		if cb, ok := e.data["content_block"].(map[string]any); ok {
			start = cb["name"].(string)
		}
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input = d["partial_json"].(string)
		}
	}
	if start != "mcp__notes__append" || input != `{"text":"buy milk"}` {
		t.Fatalf("tool %q input %q", start, input)
	}
}

func TestMessages_LimitWordAnswersTheRateLimitError(t *testing.T) {
	s, _ := newServer(t, "messages", func(s *Server) { s.Limit.Word = "LIMITED" })
	w := post(s, "/v1/messages", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"LIMITED now"}]}`)
	if w.Code != 429 || w.Header().Get("anthropic-ratelimit-unified-status") != "rejected" || !strings.Contains(w.Body.String(), "rate_limit_error") ||
		w.Header().Get("anthropic-ratelimit-unified-representative-claim") != "five_hour" || w.Header().Get("anthropic-ratelimit-unified-5h-reset") == "" {
		t.Fatalf("status %d %v %s", w.Code, w.Header(), w.Body)
	}
}

func TestMessages_WindowWordReportsAWindowPastItsWarningInTheUnifiedHeaders(t *testing.T) {
	s, _ := newServer(t, "messages", func(s *Server) { s.Window = Window{Word: "NEAR", Used: 0.97, Reset: time.Hour} })
	before := time.Now()
	h := post(s, "/v1/messages", `{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"NEAR now"}]}`).Header()
	reset, _ := strconv.ParseInt(h.Get("anthropic-ratelimit-unified-5h-reset"), 10, 64)
	if h.Get("anthropic-ratelimit-unified-status") != "allowed_warning" || h.Get("anthropic-ratelimit-unified-representative-claim") != "five_hour" ||
		h.Get("anthropic-ratelimit-unified-5h-utilization") != "0.97" || h.Get("anthropic-ratelimit-unified-5h-surpassed-threshold") == "" ||
		h.Get("anthropic-ratelimit-unified-reset") != strconv.FormatInt(reset, 10) || reset < before.Add(time.Hour).Unix()-1 || reset > time.Now().Add(time.Hour).Unix() {
		t.Fatalf("headers %v", h)
	}
	if h := post(s, "/v1/messages", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"far away"}]}`).Header(); h.Get("anthropic-ratelimit-unified-status") != "" {
		t.Fatalf("a turn without the word reports a window: %v", h)
	}
}

func TestResponses_StreamsTheAckAndLogsTheSessionID(t *testing.T) {
	s, logPath := newServer(t, "responses", nil)
	body := `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi you"}]}]}`
	evs := events(t, post(s, "/v1/responses", body, "session_id", "s-1"))
	var text string
	for _, e := range evs {
		if e.name == "response.output_text.delta" {
			text += e.data["delta"].(string)
		}
	}
	last := evs[len(evs)-1]
	if text != "ack 1: hi you" || last.name != "response.completed" || last.data["response"].(map[string]any)["usage"] == nil {
		t.Fatalf("text %q, last event %v", text, last)
	}
	if l := logLines(t, logPath)[0]; l["session_id"] != "s-1" {
		t.Fatalf("log line %v", l)
	}
}

// responsesItem is the item of the stream's output_item.done event.
func responsesItem(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	for _, e := range events(t, w) {
		if e.name == "response.output_item.done" {
			return e.data["item"].(map[string]any)
		}
	}
	t.Fatal("no output_item.done")
	return nil
}

func TestResponses_ToolWordCallsTheOfferedShellToolAskingToEscalate(t *testing.T) {
	s, _ := newServer(t, "responses", func(s *Server) { s.ToolWord = "RUNIT"; s.Escalate = true })
	it := responsesItem(t, post(s, "/v1/responses", `{"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":"RUNIT"}]}`))
	var args map[string]any
	json.Unmarshal([]byte(it["arguments"].(string)), &args)
	if it["type"] != "function_call" || it["name"] != "exec_command" || args["cmd"] != "echo fake-tool-ran" || args["sandbox_permissions"] != "require_escalated" {
		t.Fatalf("item %v", it)
	}
	res := `{"input":[{"type":"message","role":"user","content":"RUNIT"},{"type":"function_call_output","output":[{"type":"input_text","text":"Exit code: 0\nfake-tool-ran"}]}]}`
	it = responsesItem(t, post(s, "/v1/responses", res))
	if it["content"].([]any)[0].(map[string]any)["text"] != "tool done 2: fake-tool-ran" {
		t.Fatalf("answer to the output %v", it)
	}
}

func TestResponses_MCPToolBehindToolSearchIsSearchedThenCalledInItsNamespace(t *testing.T) {
	s, _ := newServer(t, "responses", nil)
	user := `{"type":"message","role":"user","content":"MCPNOTE first call"}`
	it := responsesItem(t, post(s, "/v1/responses", `{"tools":[{"type":"tool_search"}],"input":[`+user+`]}`))
	if it["type"] != "tool_search_call" || it["arguments"].(map[string]any)["query"] != "notes append" {
		t.Fatalf("first answer %v, want a tool search", it)
	}
	found := `{"type":"tool_search_output","tools":[{"type":"namespace","name":"mcp__notes","tools":[{"name":"append"}]}]}`
	it = responsesItem(t, post(s, "/v1/responses", `{"tools":[{"type":"tool_search"}],"input":[`+user+`,`+found+`]}`))
	if it["type"] != "function_call" || it["namespace"] != "mcp__notes" || it["name"] != "append" || it["arguments"] != `{"text":"first call"}` {
		t.Fatalf("second answer %v, want the call in its namespace", it)
	}
}

func TestResponses_LimitWordAnswersTheUsageLimit(t *testing.T) {
	s, _ := newServer(t, "responses", func(s *Server) { s.Limit.Word = "LIMITED" })
	w := post(s, "/v1/responses", `{"input":[{"type":"message","role":"user","content":"LIMITED"}]}`)
	if w.Code != 429 || !strings.Contains(w.Body.String(), "usage_limit_reached") {
		t.Fatalf("status %d %s", w.Code, w.Body)
	}
}

func TestChat_StreamsTheAckInChunksEndingWithUsageAndDone(t *testing.T) {
	s, logPath := newServer(t, "chat", nil)
	body := `{"model":"m1","stream":true,"tools":[{"type":"function","function":{"name":"bash"}}],"messages":[{"role":"user","content":"<current_datetime>now</current_datetime>\nhello"}]}`
	evs := events(t, post(s, "/v1/chat/completions", body))
	var text string
	for _, e := range evs {
		for _, c := range asList(e.data["choices"]) {
			if s, ok := c.(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				text += s
			}
		}
	}
	if text != "ack 1: hello" || evs[len(evs)-1].raw != "[DONE]" || evs[len(evs)-2].data["usage"] == nil {
		t.Fatalf("text %q, events %v", text, evs)
	}
	if l := logLines(t, logPath)[0]; l["model"] != "m1" || l["tools"] != true {
		t.Fatalf("log line %v", l)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func TestChat_ToolWordCallsTheFirstOfferedToolOfTheToolFlags(t *testing.T) {
	s, _ := newServer(t, "chat", func(s *Server) {
		s.ToolWord = "RUNIT"
		s.Tools.Set(`notes_append={"text":"noted"}`)
		s.Tools.Set(`bash={"command":"true"}`)
	})
	m := jsonOf(t, post(s, "/v1/chat/completions", `{"tools":[{"function":{"name":"bash"}}],"messages":[{"role":"user","content":"RUNIT"}]}`))
	ch := m["choices"].([]any)[0].(map[string]any)
	fn := ch["message"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if ch["finish_reason"] != "tool_calls" || fn["name"] != "bash" || fn["arguments"] != `{"command":"true"}` {
		t.Fatalf("answer %v", m)
	}
	m = jsonOf(t, post(s, "/v1/chat/completions", `{"messages":[{"role":"user","content":"RUNIT"},{"role":"tool","content":"ran\nok"}]}`))
	if msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any); msg["content"] != "tool done 2: ok" {
		t.Fatalf("answer to the result %v", m)
	}
}

func TestChat_ScriptRulesWinAndAOnceRuleAnswersOnce(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.jsonl")
	os.WriteFile(script, []byte(`{"match":"boom","status":500,"once":true}`+"\n"+`{"match":"boom","text":"scripted {n}"}`+"\n"), 0o600)
	s := &Server{Format: "chat"}
	if err := s.Init("", script); err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":"boom"}]}`
	if w := post(s, "/v1/chat/completions", body); w.Code != 500 {
		t.Fatalf("first: %d %s, want the scripted 500", w.Code, w.Body)
	}
	m := jsonOf(t, post(s, "/v1/chat/completions", body))
	if msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any); msg["content"] != "scripted 2" {
		t.Fatalf("second: %v", m)
	}
}

func TestChat_LimitWordAnswersTheRateLimitWhenStreamed(t *testing.T) {
	s, _ := newServer(t, "chat", func(s *Server) { s.Limit.Word = "LIMITED" })
	w := post(s, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"LIMITED"}]}`)
	if w.Code != 429 || !strings.Contains(w.Body.String(), "rate_limit_exceeded") {
		t.Fatalf("status %d %s", w.Code, w.Body)
	}
}

func TestGemini_StreamsTheAckOneWordPerChunkAndAnswersOtherPaths(t *testing.T) {
	s, _ := newServer(t, "gemini", nil)
	body := `{"contents":[{"role":"user","parts":[{"text":"<session_context>x</session_context>"},{"text":"hi there"}]}]}`
	w := post(s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", body)
	if !strings.Contains(w.Body.String(), "\r\n\r\n") {
		t.Fatalf("events not ended by CRLF CRLF: %q", w.Body)
	}
	evs := events(t, w)
	var text string
	for _, e := range evs {
		for _, p := range e.data["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any) {
			text += p.(map[string]any)["text"].(string)
		}
	}
	if text != "ack 1: hi there" || evs[len(evs)-1].data["usageMetadata"] == nil {
		t.Fatalf("text %q, last %v", text, evs[len(evs)-1])
	}
	if m := jsonOf(t, post(s, "/v1beta/models/m:countTokens", `{}`)); m["totalTokens"] != 10.0 {
		t.Fatalf("countTokens %v", m)
	}
	if w := post(s, "/v1beta/other", `{}`); w.Code != 404 {
		t.Fatalf("another path: %d", w.Code)
	}
}

func TestGemini_ToolAndMCPWordsCallTheirFunctions(t *testing.T) {
	s, _ := newServer(t, "gemini", func(s *Server) { s.ToolWord = "RUNIT" })
	call := func(body string) map[string]any {
		m := jsonOf(t, post(s, "/v1beta/models/m:generateContent", body))
		p := m["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
		fc, _ := p["functionCall"].(map[string]any)
		return fc
	}
	if fc := call(`{"contents":[{"role":"user","parts":[{"text":"RUNIT"}]}]}`); fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "echo fake-tool-ran" {
		t.Fatalf("shell call %v", fc)
	}
	mcp := `{"tools":[{"functionDeclarations":[{"name":"mcp_notes_append"}]}],"contents":[{"role":"user","parts":[{"text":"MCPNOTE hello"}]}]}`
	if fc := call(mcp); fc["name"] != "mcp_notes_append" || fc["args"].(map[string]any)["text"] != "hello" {
		t.Fatalf("MCP call %v", fc)
	}
}

func TestGemini_LimitWordAnswersResourceExhausted(t *testing.T) {
	s, _ := newServer(t, "gemini", func(s *Server) { s.Limit.Word = "LIMITED" })
	w := post(s, "/v1beta/models/m:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"LIMITED"}]}]}`)
	if w.Code != 429 || !strings.Contains(w.Body.String(), "RESOURCE_EXHAUSTED") {
		t.Fatalf("status %d %s", w.Code, w.Body)
	}
}
