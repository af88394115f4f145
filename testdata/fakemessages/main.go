// Command fakemessages is a deterministic stand-in for the Anthropic Messages
// API, so that a real Claude agent can be driven offline in end-to-end tests.
//
// It listens on 127.0.0.1 only, prints its base URL ("http://127.0.0.1:PORT")
// as the first line of stdout, and answers every POST /v1/messages (streamed
// as server-sent events, or as one JSON message when the request does not ask
// for a stream):
//
//   - normally the text "ack N: <start of the latest user text>", N being the
//     number of the request, streamed one word per text_delta;
//   - when the latest user text contains -tool-word and the request offers
//     the Bash tool, a tool_use block running -tool-command; once its
//     tool_result comes back, the text "tool done N: <last line of it>";
//   - when the latest user text contains -mcp-word and the request offers
//     the tool -mcp-tool (an MCP server's tool as Claude Code names it), a
//     tool_use of it whose text is what follows the word; its result is
//     answered as a Bash tool's is.
//
// Every request is appended to -log as one JSON line {n, method, path, body}
// before it is answered (n is 0 for anything but a Messages request of the
// agent's loop: side requests, see request.side, are answered with a fixed
// text, or {"title": -title} when they ask for the session's title; the
// anthropic-beta header is logged as "beta"). -delay pauses between events (only for turns whose
// latest user text contains -delay-word, when that is set). The server exits
// by itself after -idle without requests. -limit-word answers the API's 429
// rate_limit_error instead, with the unified rate-limit headers (reset
// -limit-reset from now).
package main

import (
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
	pace     fakeserver.Pacing
	limit    fakeserver.Limit
	toolWord string
	toolCmd  string
	mcpWord  string
	mcpTool  string
	title    string

	log *fakeserver.RequestLog
}

func main() {
	var (
		logPath = flag.String("log", "", "append every request as a JSON line to this file")
		idle    = flag.Duration("idle", 10*time.Minute, "exit after this long without a request")
		s       server
	)
	s.pace.Flags("events")
	s.limit.Flags()
	flag.StringVar(&s.toolWord, "tool-word", "", "answer with a Bash tool call when the latest user text contains this word")
	flag.StringVar(&s.toolCmd, "tool-command", "echo fake-tool-ran", "the command of that tool call")
	flag.StringVar(&s.mcpWord, "mcp-word", "MCPNOTE", "answer with a call of -mcp-tool when the latest user text contains this word")
	flag.StringVar(&s.mcpTool, "mcp-tool", "mcp__notes__append", "the MCP tool called, {\"text\": what follows -mcp-word}")
	flag.StringVar(&s.title, "title", "Fake model title", "the title a side request for the session's title (a {title} JSON schema) gets")
	flag.Parse()

	s.log = fakeserver.OpenRequestLog(*logPath)
	fakeserver.Serve(fakeserver.Options{Idle: *idle, Suffix: "", URLFile: ""}, &s)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	isMessages := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages")
	var req request
	bad := json.Unmarshal(body, &req)
	user := req.latestUserText()
	side := isMessages && bad == nil && req.side(user)
	var extra map[string]any
	if beta := r.Header.Get("anthropic-beta"); beta != "" {
		extra = map[string]any{"beta": beta} // fast mode, say, is a beta
	}
	n := s.log.Record(r, body, isMessages && !side, extra)
	if !isMessages {
		http.NotFound(w, r)
		return
	}
	if bad != nil {
		http.Error(w, "bad request body: "+bad.Error(), http.StatusBadRequest)
		return
	}
	if side {
		blocks := []block{{Type: "text", Text: "fake side answer"}}
		if req.asksTitle() {
			t, _ := json.Marshal(map[string]string{"title": s.title})
			blocks[0].Text = string(t)
		}
		if !req.Stream {
			writeMessage(w, 0, req.Model, blocks)
			return
		}
		newStream(w, 0).message(0, req.Model, blocks)
		return
	}
	if s.limit.Hit(user) {
		s.limit.Anthropic(w)
		return
	}
	var blocks []block
	switch out, ok := req.pendingToolResult(); {
	case ok:
		blocks = []block{{Type: "text", Text: fmt.Sprintf("tool done %d: %s", n, start(lastLine(out)))}}
	case s.toolWord != "" && strings.Contains(user, s.toolWord) && req.offers("Bash"):
		input, _ := json.Marshal(map[string]any{"command": s.toolCmd, "description": "Run the fake tool command"})
		blocks = []block{{Type: "tool_use", ID: fmt.Sprintf("toolu_fake_%d", n), Name: "Bash", Input: input}}
	case s.mcpWord != "" && strings.Contains(user, s.mcpWord) && req.offers(s.mcpTool):
		after := mcpText(user, s.mcpWord)
		input, _ := json.Marshal(map[string]any{"text": after})
		blocks = []block{{Type: "tool_use", ID: fmt.Sprintf("toolu_fake_%d", n), Name: s.mcpTool, Input: input}}
	default:
		blocks = []block{{Type: "text", Text: fmt.Sprintf("ack %d: %s", n, start(user))}}
	}
	if !req.Stream {
		writeMessage(w, n, req.Model, blocks)
		return
	}
	delay := s.pace.For(user)
	newStream(w, delay).message(n, req.Model, blocks)
}

// request is the part of a Messages request the fake reads.
type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	// OutputConfig.Format is a structured answer's schema: Claude Code asks
	// for the session's title as {"title": string}.
	OutputConfig struct {
		Format struct {
			Schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

// asksTitle reports a side request for the session's title.
func (r request) asksTitle() bool {
	_, ok := r.OutputConfig.Format.Schema.Properties["title"]
	return ok && len(r.OutputConfig.Format.Schema.Properties) == 1
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// block is one content block, of a request or of a reply.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// blocks reads a message's content, a string or a list of blocks.
func (m message) blocks() []block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	json.Unmarshal(m.Content, &bs)
	return bs
}

// latestUserText is the text of the last user text block that is not
// context Claude Code adds by itself (reminders in angle brackets).
// side reports whether the request is one of Claude Code's side requests,
// not a step of the agent's loop: those that offer no tools (the session's
// title, probes) and the next-prompt suggestion, which forks the
// conversation with the loop's tools. They are answered with a fixed text
// and not numbered, so N counts the loop's requests alone.
func (r request) side(latestUser string) bool {
	return len(r.Tools) == 0 || strings.HasPrefix(latestUser, "[SUGGESTION MODE")
}

func (r request) latestUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		bs := r.Messages[i].blocks()
		for j := len(bs) - 1; j >= 0; j-- {
			if t := strings.TrimSpace(bs[j].Text); bs[j].Type == "text" && t != "" && !strings.HasPrefix(t, "<") {
				return t
			}
		}
	}
	return ""
}

// pendingToolResult is the content of a tool_result in the last message,
// i.e. the model must now answer the tool's result.
func (r request) pendingToolResult() (string, bool) {
	// Claude Code may put system messages after the conversation's last turn.
	last := len(r.Messages) - 1
	for last >= 0 && r.Messages[last].Role == "system" {
		last--
	}
	if last < 0 || r.Messages[last].Role != "user" {
		return "", false
	}
	for _, b := range r.Messages[last].blocks() {
		if b.Type != "tool_result" {
			continue
		}
		var s string
		if json.Unmarshal(b.Content, &s) != nil {
			var parts []block
			json.Unmarshal(b.Content, &parts)
			for _, p := range parts {
				s += p.Text
			}
		}
		return s, true
	}
	return "", false
}

func (r request) offers(tool string) bool {
	for _, t := range r.Tools {
		if t.Name == tool {
			return true
		}
	}
	return false
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

func stopReason(blocks []block) string {
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

var usage = map[string]any{"input_tokens": 10, "output_tokens": 5,
	"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

// writeMessage answers a request that did not ask for a stream.
func writeMessage(w http.ResponseWriter, n int, model string, blocks []block) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": blocks, "stop_reason": stopReason(blocks), "stop_sequence": nil, "usage": usage,
	})
}

// stream writes one Messages SSE reply.
type stream struct {
	w     http.ResponseWriter
	delay time.Duration
	first bool
}

func newStream(w http.ResponseWriter, delay time.Duration) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, delay: delay, first: true}
}

func (st *stream) event(typ string, fields map[string]any) {
	if !st.first && st.delay > 0 {
		time.Sleep(st.delay)
	}
	st.first = false
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	fmt.Fprintf(st.w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// message streams blocks: text one word per delta, tool input in one delta.
func (st *stream) message(n int, model string, blocks []block) {
	st.event("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, b := range blocks {
		switch b.Type {
		case "text":
			st.event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, word := range strings.SplitAfter(b.Text, " ") {
				st.event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": word}})
			}
		case "tool_use":
			st.event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			st.event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
		}
		st.event("content_block_stop", map[string]any{"index": i})
	}
	st.event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stopReason(blocks), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	st.event("message_stop", map[string]any{})
}

// mcpText is what follows the last word in text, to the end of its line:
// a prompt that quotes earlier ones (a resume context) asks for its own.
func mcpText(text, word string) string {
	after := text[strings.LastIndex(text, word)+len(word):]
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line)
}
