// Package fakemodel is a deterministic stand-in for the model APIs real
// agents talk to, so the end-to-end suites can drive those agents offline.
// testdata/fakemodel is its program; -format picks the wire format:
//
//   - messages: the Anthropic Messages API (Claude Code), POST /v1/messages;
//   - responses: the OpenAI Responses API (Codex), POST /v1/responses;
//   - chat: the OpenAI Chat Completions API (OpenCode, Copilot CLI),
//     POST /v1/chat/completions;
//   - gemini: the Gemini API (Gemini CLI), POST
//     /v1beta/models/M:streamGenerateContent, :generateContent, :countTokens.
//
// It listens on 127.0.0.1 only and prints its base URL as the first line of
// stdout (and to -url-file): "http://127.0.0.1:PORT", with "/v1" for
// responses and chat. Every request is appended to -log as one JSON line
// {n, method, path, body} plus what the format adds (see RequestLog) before
// it is answered; anything but the format's own requests gets 404.
//
// Replies, for U the latest user text (without the context an agent adds
// before what the user typed) and N the number of the request:
//  1. a -script rule whose "match" U contains (first match wins);
//  2. when a tool's result came after U: "tool done N: <last line of it>";
//  3. when U contains -tool-word: a call of the first -tool NAME=ARGS the
//     request offers or, with no -tool, the format's shell tool running
//     -tool-command (Bash, Codex's shell tool, run_shell_command);
//  4. when U contains -mcp-word and the request offers -mcp-tool: a call of
//     it, {"text": what follows the word on its line};
//  5. otherwise "ack N: <start of U>".
//
// Text streams one word per event or chunk, where the request asks for a
// stream; -delay pauses between them when U contains -delay-word (or
// always, when that is empty). -limit-word answers the vendor's 429 instead;
// -window-word (messages) reports a usage window in an answer's headers.
// -script FILE holds JSON lines {"match", "text"} ("text" may hold {n}),
// {"match", "tool", "arguments"} or {"match", "status"} for an HTTP error;
// with "once": true a rule answers its first match only. The server exits by
// itself after -idle without requests.
package fakemodel

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
)

// Server is the fake model; its fields are the program's flags.
type Server struct {
	Format   string // messages, responses, chat or gemini
	Pace     Pacing
	Limit    Limit
	Window   Window // messages: a usage window in the answer's headers
	ToolWord string
	ToolCmd  string
	Tools    ToolFlag
	Escalate bool // responses: the shell call asks to leave the sandbox
	MCPWord  string
	MCPTool  string
	Title    string // messages: the answer to Claude Code's title request

	mu    sync.Mutex // guards rules
	rules []*rule
	log   *RequestLog
}

// Main runs the program testdata/fakemodel with the arguments args.
func Main(args []string) {
	fs := flag.NewFlagSet("fakemodel", flag.ExitOnError)
	var s Server
	urlFile := fs.String("url-file", "", "also write the base URL to this file")
	logPath := fs.String("log", "", "append every request as a JSON line to this file")
	script := fs.String("script", "", "JSON lines of scripted replies")
	idle := fs.Duration("idle", 10*time.Minute, "exit after this long without a request")
	s.flags(fs)
	fs.Parse(args)
	if err := s.Init(*logPath, *script); err != nil {
		log.Fatal(err)
	}
	suffix := ""
	if s.Format == "responses" || s.Format == "chat" {
		suffix = "/v1"
	}
	serve(options{Idle: *idle, Suffix: suffix, URLFile: *urlFile}, &s)
}

func (s *Server) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.Format, "format", "", "the wire format: messages, responses, chat or gemini")
	s.Pace.flags(fs)
	s.Limit.flags(fs)
	s.Window.flags(fs)
	fs.StringVar(&s.ToolWord, "tool-word", "", "answer with a tool call when the latest user text contains this word")
	fs.StringVar(&s.ToolCmd, "tool-command", "echo fake-tool-ran", "the command of the format's shell tool call")
	fs.Var(&s.Tools, "tool", "NAME=JSON-ARGUMENTS of the tool call, used when the request offers NAME (repeatable)")
	fs.BoolVar(&s.Escalate, "tool-escalate", false, `responses: the shell call asks to run outside the sandbox (sandbox_permissions "require_escalated")`)
	fs.StringVar(&s.MCPWord, "mcp-word", "MCPNOTE", "answer with a call of -mcp-tool when the latest user text contains this word")
	fs.StringVar(&s.MCPTool, "mcp-tool", "", `the MCP tool called (default "mcp__notes__append", gemini "mcp_notes_append")`)
	fs.StringVar(&s.Title, "title", "Fake model title", "messages: the title Claude Code's title request gets")
}

// Init checks the format, reads the script at script ("": none) and opens
// the request log at logPath ("": none).
func (s *Server) Init(logPath, script string) error {
	switch s.Format {
	case "messages", "responses", "chat", "gemini":
	default:
		return fmt.Errorf("-format %q: want messages, responses, chat or gemini", s.Format)
	}
	if s.MCPTool == "" {
		s.MCPTool = "mcp__notes__append"
		if s.Format == "gemini" {
			s.MCPTool = "mcp_notes_append"
		}
	}
	if script != "" {
		rules, err := readScript(script)
		if err != nil {
			return err
		}
		s.rules = rules
	}
	s.log = OpenRequestLog(logPath)
	return nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch s.Format {
	case "messages":
		s.messages(w, r, body)
	case "responses":
		s.responses(w, r, body)
	case "chat":
		s.chat(w, r, body)
	default:
		s.gemini(w, r, body)
	}
}

// ToolFlag collects -tool NAME=ARGS values in order.
type ToolFlag [][2]string

func (f *ToolFlag) String() string { return fmt.Sprint(*f) }

// Set adds one NAME=JSON-ARGUMENTS.
func (f *ToolFlag) Set(v string) error {
	name, args, ok := strings.Cut(v, "=")
	if !ok || !json.Valid([]byte(args)) {
		return fmt.Errorf("want NAME=JSON-ARGUMENTS, got %q", v)
	}
	*f = append(*f, [2]string{name, args})
	return nil
}

// rule is one scripted reply.
type rule struct {
	Match     string `json:"match"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	Namespace string `json:"namespace"` // of the tool, as Codex offers some (collaboration)
	Arguments string `json:"arguments"`
	Status    int    `json:"status"`
	Once      bool   `json:"once"`
	used      bool
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

// scripted is the first rule that matches the user text, if any.
func (s *Server) scripted(user string) *rule {
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

// turn is what a format's request tells the reply rules.
type turn struct {
	n       int
	user    string // the latest user text
	out     string // the result of a tool call, when pending
	pending bool
	offers  func(name string) bool
	shell   func(cmd string) *call          // the format's shell call; nil: none
	mcp     func(text string) (reply, bool) // nil: a call of -mcp-tool when offered
}

// call is one tool call; args is its JSON.
type call struct{ namespace, name, args string }

// reply is what the model answers: text, a tool call, a tool search
// (responses) or an HTTP error status.
type reply struct {
	text   string
	call   *call
	search string
	status int
}

// decide applies the reply rules of the package comment to t.
func (s *Server) decide(t turn) reply {
	if ru := s.scripted(t.user); ru != nil {
		rep := reply{text: strings.ReplaceAll(ru.Text, "{n}", fmt.Sprint(t.n)), status: ru.Status}
		if ru.Tool != "" {
			rep.call = &call{namespace: ru.Namespace, name: ru.Tool, args: ru.Arguments}
		}
		return rep
	}
	if t.pending {
		return reply{text: fmt.Sprintf("tool done %d: %s", t.n, start(lastLine(t.out)))}
	}
	if s.ToolWord != "" && strings.Contains(t.user, s.ToolWord) {
		for _, tl := range s.Tools {
			if t.offers(tl[0]) {
				return reply{call: &call{name: tl[0], args: tl[1]}}
			}
		}
		if len(s.Tools) == 0 && t.shell != nil {
			if c := t.shell(s.ToolCmd); c != nil {
				return reply{call: c}
			}
		}
	}
	if s.MCPWord != "" && strings.Contains(t.user, s.MCPWord) {
		text := mcpText(t.user, s.MCPWord)
		if t.mcp != nil {
			if rep, ok := t.mcp(text); ok {
				return rep
			}
		} else if t.offers(s.MCPTool) {
			return reply{call: &call{name: s.MCPTool, args: jsonString(map[string]any{"text": text})}}
		}
	}
	return reply{text: fmt.Sprintf("ack %d: %s", t.n, start(t.user))}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
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

// mcpText is what follows the last word in text, to the end of its line:
// a prompt that quotes earlier ones (a resume context) asks for its own.
func mcpText(text, word string) string {
	after := text[strings.LastIndex(text, word)+len(word):]
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line)
}

// textOf is a content that is a string or a list of parts with text.
func textOf(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// sse writes one server-sent event stream, pausing delay between events.
type sse struct {
	w     http.ResponseWriter
	delay time.Duration
	eol   string
	first bool
}

func newSSE(w http.ResponseWriter, delay time.Duration) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, delay: delay, eol: "\n", first: true}
}

// send writes data (JSON of v, or v itself when a string) as one event,
// named event unless that is "".
func (st *sse) send(event string, v any) {
	if !st.first && st.delay > 0 {
		time.Sleep(st.delay)
	}
	st.first = false
	data, ok := v.(string)
	if !ok {
		data = jsonString(v)
	}
	if event != "" {
		fmt.Fprintf(st.w, "event: %s%s", event, st.eol)
	}
	fmt.Fprintf(st.w, "data: %s%s%s", data, st.eol, st.eol)
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// typed sends fields with "type": typ as the event typ.
func (st *sse) typed(typ string, fields map[string]any) {
	fields["type"] = typ
	st.send(typ, fields)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// words splits text as it streams: one word (with its space) a piece.
func words(text string) []string { return strings.SplitAfter(text, " ") }
