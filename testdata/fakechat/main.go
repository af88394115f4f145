// Command fakechat is a deterministic stand-in for the OpenAI Chat Completions
// API (streamed), so that real agents that speak it (OpenCode, Copilot CLI in
// its bring-your-own-key mode) can be driven offline in end-to-end tests.
//
// How to drive it from a test:
//
//   - Build it (`go build -o BIN ../testdata/fakechat`; `go ./...` skips
//     testdata) and start it. It listens on 127.0.0.1 only and prints its base
//     URL, "http://127.0.0.1:PORT/v1", as the first line of stdout (and to
//     -url-file). Point the agent's provider base URL at it.
//   - Every request, whatever its path, is appended to -log as one JSON line
//     {n, method, path, model, tools, body} before it is answered, so the
//     test can check what the model was shown (body is the request's JSON; a
//     string when it is not JSON, null when empty). Only POST .../chat/completions is
//     answered; anything else (an agent's npm registry look-ups, say) gets 404.
//     Requests that offer no tools (title or summary requests some agents make
//     on the side) are logged with "tools": false.
//   - Replies, for the latest user text U (the last user message, without the
//     context blocks some agents put before what the user typed, such as
//     Copilot's "<current_datetime>...</current_datetime>") and N, the number
//     of the request:
//     1. a -script rule whose "match" U contains (first match wins, see below);
//     2. when a tool result came after U: "tool done N: <last line of it>";
//     3. when U contains -tool-word: one call of the first -tool NAME=ARGS
//     whose NAME the request offers (repeat -tool for several agents' names);
//     4. otherwise "ack N: <start of U>".
//     Text streams one word per chunk ("stream": false gets one
//     chat.completion object instead); -delay pauses between chunks when U
//     contains -delay-word (or always, when -delay-word is empty).
//   - -script FILE holds JSON lines {"match": "...", "text": "..."} or
//     {"match": "...", "tool": "NAME", "arguments": "{...}"}, or
//     {"match": "...", "status": 500} for an HTTP error; "text" may hold {n}.
//     A rule with "once": true is used for its first match only.
//   - The server exits by itself after -idle without requests.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/internal/fakeserver"
)

// rule is one scripted reply.
type rule struct {
	Match     string `json:"match"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Status    int    `json:"status"`
	Once      bool   `json:"once"`
	used      bool
}

// toolFlag collects -tool NAME=ARGS values in order.
type toolFlag [][2]string

func (f *toolFlag) String() string { return fmt.Sprint(*f) }
func (f *toolFlag) Set(v string) error {
	name, args, ok := strings.Cut(v, "=")
	if !ok || !json.Valid([]byte(args)) {
		return fmt.Errorf("want NAME=JSON-ARGUMENTS, got %q", v)
	}
	*f = append(*f, [2]string{name, args})
	return nil
}

type server struct {
	pace     fakeserver.Pacing
	limit    fakeserver.Limit
	toolWord string
	tools    toolFlag

	mu    sync.Mutex // guards rules
	rules []*rule
	log   *fakeserver.RequestLog
}

func main() {
	var (
		urlFile = flag.String("url-file", "", "also write the base URL to this file")
		logPath = flag.String("log", "", "append every request as a JSON line to this file")
		script  = flag.String("script", "", "JSON lines of scripted replies")
		idle    = flag.Duration("idle", 10*time.Minute, "exit after this long without a request")
		s       server
	)
	s.pace.Flags("chunks")
	s.limit.Flags()
	flag.StringVar(&s.toolWord, "tool-word", "", "answer with a tool call when the latest user text contains this word")
	flag.Var(&s.tools, "tool", "NAME=JSON-ARGUMENTS of the tool call, used when the request offers NAME (repeatable)")
	flag.Parse()

	if *script != "" {
		rules, err := readScript(*script)
		if err != nil {
			log.Fatal(err)
		}
		s.rules = rules
	}
	s.log = fakeserver.OpenRequestLog(*logPath)
	fakeserver.Serve(fakeserver.Options{Idle: *idle, Suffix: "/v1", URLFile: *urlFile}, &s)
}

func readScript(path string) ([]*rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rules []*rule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r rule
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %v: %s", path, err, sc.Text())
		}
		rules = append(rules, &r)
	}
	return rules, sc.Err()
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req request
	json.Unmarshal(body, &req)
	n := s.log.Record(r, body, true, map[string]any{"model": req.Model, "tools": len(req.Tools) > 0})
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	if !json.Valid(body) {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	if req.Model == "" {
		req.Model = "fake"
	}
	rep := s.reply(req, n)
	if rep.status != 0 {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"scripted failure %d"}}`, rep.status), rep.status)
		return
	}
	if !req.Stream {
		whole(w, rep, n, req.Model)
		return
	}
	if s.limit.Hit(req.latestUserText()) {
		s.limit.OpenAIRateLimit(w)
		return
	}
	delay := s.pace.For(req.latestUserText())
	st := newStream(w, delay, n, req.Model)
	if rep.tool != "" {
		st.toolCall(rep.tool, rep.args)
	} else {
		st.text(rep.text)
	}
}

// reply is what the model answers: text, one tool call, or an HTTP error.
type reply struct {
	text, tool, args string
	status           int
}

// reply decides the answer to request number n (see the package comment).
func (s *server) reply(req request, n int) reply {
	user := req.latestUserText()
	if ru := s.scripted(user); ru != nil {
		return reply{text: strings.ReplaceAll(ru.Text, "{n}", fmt.Sprint(n)), tool: ru.Tool, args: ru.Arguments, status: ru.Status}
	}
	if out, ok := req.pendingToolResult(); ok {
		return reply{text: fmt.Sprintf("tool done %d: %s", n, start(lastLine(out)))}
	}
	if s.toolWord != "" && strings.Contains(user, s.toolWord) {
		if name, args, ok := s.offeredTool(req); ok {
			return reply{tool: name, args: args}
		}
	}
	return reply{text: fmt.Sprintf("ack %d: %s", n, start(user))}
}

// whole writes a reply as one chat.completion object, for "stream": false.
func whole(w http.ResponseWriter, rep reply, n int, model string) {
	msg := map[string]any{"role": "assistant", "content": rep.text}
	finish := "stop"
	if rep.tool != "" {
		msg["content"], finish = nil, "tool_calls"
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_chatcmpl-%d", n), "type": "function",
			"function": map[string]any{"name": rep.tool, "arguments": rep.args}}}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// scripted is the first rule that matches the user text, if any.
func (s *server) scripted(user string) *rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.Once && r.used || !strings.Contains(user, r.Match) {
			continue
		}
		r.used = true
		return r
	}
	return nil
}

// offeredTool is the first -tool whose name the request offers.
func (s *server) offeredTool(req request) (string, string, bool) {
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Function.Name] = true
	}
	for _, t := range s.tools {
		if offered[t[0]] {
			return t[0], t[1], true
		}
	}
	return "", "", false
}

// request is the part of a Chat Completions request the fake reads.
type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is the message's content: a string or the text of its parts.
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (r request) latestUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return withoutContext(r.Messages[i].text())
		}
	}
	return ""
}

// withoutContext drops the <tag>...</tag> blocks at the start of a user
// text: context an agent adds before what the user typed.
func withoutContext(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, "<") {
		name, _, ok := strings.Cut(s[1:], ">")
		if !ok || name == "" || strings.ContainsAny(name, " /\n") {
			break
		}
		_, rest, ok := strings.Cut(s, "</"+name+">")
		if !ok {
			break
		}
		s = strings.TrimSpace(rest)
	}
	return s
}

// pendingToolResult is the content of a tool message that came after the
// latest user message: the model must now answer the call's result.
func (r request) pendingToolResult() (string, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		switch r.Messages[i].Role {
		case "tool":
			return r.Messages[i].text(), true
		case "user":
			return "", false
		}
	}
	return "", false
}

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

// stream writes one streamed chat.completion.chunk reply.
type stream struct {
	w     http.ResponseWriter
	delay time.Duration
	id    string
	model string
	first bool
}

func newStream(w http.ResponseWriter, delay time.Duration, n int, model string) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, delay: delay, id: fmt.Sprintf("chatcmpl-%d", n), model: model, first: true}
}

func (st *stream) send(data string) {
	if !st.first && st.delay > 0 {
		time.Sleep(st.delay)
	}
	st.first = false
	fmt.Fprintf(st.w, "data: %s\n\n", data)
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chunk sends one chunk with the given delta and finish reason.
func (st *stream) chunk(delta map[string]any, finish any) {
	b, _ := json.Marshal(map[string]any{
		"id": st.id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": st.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	})
	st.send(string(b))
}

// end sends the usage chunk and [DONE].
func (st *stream) end() {
	b, _ := json.Marshal(map[string]any{
		"id": st.id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": st.model,
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	st.send(string(b))
	st.send("[DONE]")
}

// text streams an assistant message, one word per chunk.
func (st *stream) text(text string) {
	st.chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, w := range strings.SplitAfter(text, " ") {
		st.chunk(map[string]any{"content": w}, nil)
	}
	st.chunk(map[string]any{}, "stop")
	st.end()
}

// toolCall streams one function call and ends the reply.
func (st *stream) toolCall(name, args string) {
	st.chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"index": 0, "id": "call_" + st.id, "type": "function",
		"function": map[string]any{"name": name, "arguments": ""}}}}, nil)
	st.chunk(map[string]any{"tool_calls": []any{map[string]any{
		"index": 0, "function": map[string]any{"arguments": args}}}}, nil)
	st.chunk(map[string]any{}, "tool_calls")
	st.end()
}
