// Command fakeresponses is a deterministic stand-in for the OpenAI Responses
// API, so that a real Codex agent can be driven offline in end-to-end tests.
//
// It listens on 127.0.0.1 only, prints its base URL ("http://127.0.0.1:PORT/v1")
// as the first line of stdout (and to -url-file), and answers every
// POST /v1/responses with a server-sent event stream:
//
//   - normally the text "ack N: <start of the latest user text>", N being the
//     number of the request, streamed one word per output_text delta;
//   - when the latest user text contains -tool-word, a function call to the
//     shell tool the request offers, running -tool-command; once the call's
//     output comes back, the text "tool done N: <last line of that output>"
//     (with -tool-escalate, the call asks to run outside the sandbox);
//   - when the latest user text contains -mcp-word and the request offers
//     the MCP tool -mcp-tool (as Codex offers one: a function in the
//     namespace tool mcp__SERVER, or one function named mcp__SERVER__TOOL),
//     a call of it whose text is what follows the word; when Codex defers
//     MCP tools behind its tool_search tool, a tool_search_call for it
//     first, and the call once the search's output brought the tool.
//
// Every request is appended to -log as one JSON line {n, path, session_id,
// body} before it is answered. -delay pauses between events (only for turns
// whose latest user text contains -delay-word, when that is set). The server
// exits by itself after -idle without requests.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kandev/kandev/internal/fakeserver"
)

type server struct {
	limit    fakeserver.Limit
	pace     fakeserver.Pacing
	toolWord string
	toolCmd  string
	escalate bool
	mcpWord  string
	mcpTool  string // mcp__SERVER__TOOL

	log *fakeserver.RequestLog
}

func main() {
	var (
		urlFile = flag.String("url-file", "", "also write the base URL to this file")
		logPath = flag.String("log", "", "append every request as a JSON line to this file")
		idle    = flag.Duration("idle", 10*time.Minute, "exit after this long without a request")
		s       server
	)
	s.pace.Flags("events")
	s.limit.Flags()
	flag.StringVar(&s.toolWord, "tool-word", "", "answer with a shell function call when the latest user text contains this word")
	flag.StringVar(&s.toolCmd, "tool-command", "echo fake-tool-ran", "the shell command of that function call")
	flag.BoolVar(&s.escalate, "tool-escalate", false, `ask for the shell call to run outside the sandbox (sandbox_permissions "require_escalated"), which Codex puts to the client under approval_policy "on-request"`)
	flag.StringVar(&s.mcpWord, "mcp-word", "MCPNOTE", "answer with a call of -mcp-tool when the latest user text contains this word")
	flag.StringVar(&s.mcpTool, "mcp-tool", "mcp__notes__append", "the MCP tool called, {\"text\": what follows -mcp-word}")
	flag.Parse()

	s.log = fakeserver.OpenRequestLog(*logPath)
	fakeserver.Serve(fakeserver.Options{Idle: *idle, Suffix: "/v1", URLFile: *urlFile}, &s)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := s.log.Record(r, body, true, map[string]any{"session_id": r.Header.Get("session_id") + r.Header.Get("session-id")})
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	user := req.latestUserText()
	if s.limit.Hit(user) {
		s.limit.OpenAIUsageLimit(w)
		return
	}
	delay := s.pace.For(user)
	st := newStream(w, delay, n)
	switch out, ok := req.pendingToolOutput(); {
	case ok:
		st.message(fmt.Sprintf("tool done %d: %s", n, start(lastLine(out))))
	case s.toolWord != "" && strings.Contains(user, s.toolWord):
		name, args := req.shellCall(s.toolCmd, s.escalate)
		st.functionCall("", name, args)
	case s.mcpWord != "" && strings.Contains(user, s.mcpWord) && req.offersMCP(s.mcpTool) == "" && req.offersToolSearch() && !req.searchedTools():
		// Codex 0.166 defers MCP tools behind tool_search: search first.
		st.toolSearchCall(strings.ReplaceAll(strings.TrimPrefix(s.mcpTool, "mcp__"), "__", " "))
	case s.mcpWord != "" && strings.Contains(user, s.mcpWord) && req.offersMCP(s.mcpTool) != "":
		after := mcpText(user, s.mcpWord)
		args, _ := json.Marshal(map[string]any{"text": after})
		ns, name := req.offersMCP(s.mcpTool), s.mcpTool
		if ns != name {
			name = strings.TrimPrefix(s.mcpTool, ns+"__")
		} else {
			ns = ""
		}
		st.functionCall(ns, name, string(args))
	default:
		st.message(fmt.Sprintf("ack %d: %s", n, start(user)))
	}
}

// request is the part of a Responses request the fake reads.
type request struct {
	Input []item `json:"input"`
	Tools []tool `json:"tools"`
}

// offersMCP is the namespace that offers tool (mcp__SERVER__TOOL), or the
// tool's own name when it is offered as one function; "" when not offered.
// The tools a tool search found (in the input) count as offered.
func (r request) offersMCP(tool string) string {
	tools := r.Tools
	for _, it := range r.Input {
		if it.Type == "tool_search_output" {
			tools = append(tools, it.Tools...)
		}
	}
	for _, t := range tools {
		if t.Name == tool {
			return tool
		}
		if t.Type == "namespace" && strings.HasPrefix(tool, t.Name+"__") {
			for _, sub := range t.Tools {
				if t.Name+"__"+sub.Name == tool {
					return t.Name
				}
			}
		}
	}
	return ""
}

type item struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
	Tools   []tool          `json:"tools"` // of a tool_search_output
}

// tool is an offered tool: a function, or a namespace of functions.
type tool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"` // of a namespace
}

// offersToolSearch reports whether the request offers Codex's tool_search.
func (r request) offersToolSearch() bool {
	for _, t := range r.Tools {
		if t.Type == "tool_search" {
			return true
		}
	}
	return false
}

// searchedTools reports whether a tool search was answered since the latest
// user message (so its tools are what it found, and it is not repeated).
func (r request) searchedTools() bool {
	for i := len(r.Input) - 1; i >= 0; i-- {
		switch it := r.Input[i]; {
		case it.Type == "tool_search_output":
			return true
		case it.Type == "message" && it.Role == "user":
			return false
		}
	}
	return false
}

// text is the concatenated text of a message item.
func (it item) text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(it.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// latestUserText is the text of the last user message that is not context
// Codex adds by itself (environment context, instructions in angle brackets).
func (r request) latestUserText() string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		if it.Type == "message" && it.Role == "user" {
			if t := strings.TrimSpace(it.text()); t != "" && !strings.HasPrefix(t, "<") {
				return t
			}
		}
	}
	return ""
}

// pendingToolOutput is the output of a function call that came after the
// latest user message, i.e. the model must now answer the call's result.
func (r request) pendingToolOutput() (string, bool) {
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			// A string, {content}, or (Codex 0.166) a list of input_text parts.
			var s string
			if json.Unmarshal(it.Output, &s) != nil {
				var o struct {
					Content string `json:"content"`
				}
				if json.Unmarshal(it.Output, &o) == nil {
					s = o.Content
				} else {
					var parts []struct {
						Text string `json:"text"`
					}
					json.Unmarshal(it.Output, &parts)
					for _, p := range parts {
						s += p.Text + "\n"
					}
				}
			}
			return s, true
		case it.Type == "message" && it.Role == "user":
			return "", false
		}
	}
	return "", false
}

// shellCall picks the shell tool the request offers and encodes cmd as its
// arguments; tool names differ between Codex versions and models.
func (r request) shellCall(cmd string, escalate bool) (name, args string) {
	offered := map[string]bool{}
	for _, t := range r.Tools {
		offered[t.Name] = true
	}
	var a map[string]any
	switch {
	case offered["shell_command"]:
		name, a = "shell_command", map[string]any{"command": cmd}
	case offered["exec_command"]:
		name, a = "exec_command", map[string]any{"cmd": cmd}
	default:
		name, a = "shell", map[string]any{"command": []string{"sh", "-c", cmd}}
	}
	if escalate {
		a["sandbox_permissions"] = "require_escalated"
		a["justification"] = "the test asks for it"
	}
	b, _ := json.Marshal(a)
	return name, string(b)
}

// lastLine is the last non-blank line of s: the command's own output, after
// the header Codex puts in front of it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// start is the beginning of s on one line, at most 60 characters.
func start(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60])
	}
	return s
}

// stream writes one Responses SSE reply.
type stream struct {
	w     http.ResponseWriter
	delay time.Duration
	id    string
	first bool
}

func newStream(w http.ResponseWriter, delay time.Duration, n int) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, delay: delay, id: fmt.Sprintf("resp_%d", n), first: true}
}

func (st *stream) event(typ string, fields map[string]any) {
	if !st.first && st.delay > 0 {
		time.Sleep(st.delay)
	}
	st.first = false
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", typ, b)
	st.w.Write(buf.Bytes())
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *stream) response(status string, output []any) map[string]any {
	r := map[string]any{
		"id": st.id, "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": "fake", "output": output,
	}
	if status == "completed" {
		r["usage"] = map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 15,
		}
	}
	return r
}

func (st *stream) begin() {
	st.event("response.created", map[string]any{"response": st.response("in_progress", []any{})})
	st.event("response.in_progress", map[string]any{"response": st.response("in_progress", []any{})})
}

// message streams text as an assistant message, one word per delta.
func (st *stream) message(text string) {
	st.begin()
	id := "msg_" + st.id
	st.event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}})
	loc := map[string]any{"item_id": id, "output_index": 0, "content_index": 0}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range loc {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	st.event("response.content_part.added", with(map[string]any{"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
	words := strings.SplitAfter(text, " ")
	for _, w := range words {
		st.event("response.output_text.delta", with(map[string]any{"delta": w}))
	}
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	st.event("response.output_text.done", with(map[string]any{"text": text}))
	st.event("response.content_part.done", with(map[string]any{"part": part}))
	done := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed", "content": []any{part}}
	st.event("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	st.event("response.completed", map[string]any{"response": st.response("completed", []any{done})})
}

// functionCall streams one function call (of a tool in namespace, when
// that is not "") and ends the response.
func (st *stream) functionCall(namespace, name, args string) {
	st.begin()
	id, callID := "fc_"+st.id, "call_"+st.id
	added := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": "", "status": "in_progress"}
	if namespace != "" {
		added["namespace"] = namespace
	}
	st.event("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	st.event("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": 0, "delta": args})
	st.event("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": 0, "arguments": args})
	done := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": args, "status": "completed"}
	if namespace != "" {
		done["namespace"] = namespace
	}
	st.event("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	st.event("response.completed", map[string]any{"response": st.response("completed", []any{done})})
}

// toolSearchCall streams one call of the client-run tool_search tool, for
// query, and ends the response.
func (st *stream) toolSearchCall(query string) {
	st.begin()
	done := map[string]any{"type": "tool_search_call", "id": "ts_" + st.id, "call_id": "call_" + st.id,
		"execution": "client", "status": "completed", "arguments": map[string]any{"query": query, "limit": 8}}
	st.event("response.output_item.added", map[string]any{"output_index": 0, "item": done})
	st.event("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	st.event("response.completed", map[string]any{"response": st.response("completed", []any{done})})
}

// mcpText is what follows the last word in text, to the end of its line:
// a prompt that quotes earlier ones (a resume context) asks for its own.
func mcpText(text, word string) string {
	after := text[strings.LastIndex(text, word)+len(word):]
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line)
}
