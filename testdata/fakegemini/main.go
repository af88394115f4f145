// Command fakegemini is a deterministic stand-in for the Gemini API
// (generativelanguage v1beta), so that a real Gemini CLI can be driven
// offline in end-to-end tests.
//
// It listens on 127.0.0.1 only, prints its base URL ("http://127.0.0.1:PORT")
// as the first line of stdout, and answers
// POST /v1beta/models/M:streamGenerateContent (server-sent events) and
// POST /v1beta/models/M:generateContent (one JSON reply):
//
//   - normally the text "ack N: <start of the latest user text>", N being the
//     number of the request, streamed one word per chunk;
//   - when the latest user text contains -tool-word, a run_shell_command
//     function call running -tool-command; once the call's response comes
//     back, the text "tool done N: <start of that response>";
//   - when the latest user text contains -mcp-word and the request declares
//     the function -mcp-tool (an MCP server's tool as Gemini CLI names it),
//     a call of it whose text is what follows the word.
//
// countTokens is answered with a small count. Every request is appended to
// -log as one JSON line {n, method, path, body} before it is answered.
// -delay pauses between chunks (only for turns whose latest user text
// contains -delay-word, when that is set). The server exits by itself after
// -idle without requests.
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

	log *fakeserver.RequestLog
}

func main() {
	var (
		logPath = flag.String("log", "", "append every request as a JSON line to this file")
		idle    = flag.Duration("idle", 10*time.Minute, "exit after this long without a request")
		s       server
	)
	s.pace.Flags("chunks")
	s.limit.Flags()
	flag.StringVar(&s.toolWord, "tool-word", "", "answer with a shell function call when the latest user text contains this word")
	flag.StringVar(&s.toolCmd, "tool-command", "echo fake-tool-ran", "the shell command of that function call")
	flag.StringVar(&s.mcpWord, "mcp-word", "MCPNOTE", "answer with a call of -mcp-tool when the latest user text contains this word")
	flag.StringVar(&s.mcpTool, "mcp-tool", "mcp_notes_append", "the MCP tool called, {\"text\": what follows -mcp-word}")
	flag.Parse()

	s.log = fakeserver.OpenRequestLog(*logPath)
	fakeserver.Serve(fakeserver.Options{Idle: *idle, Suffix: "", URLFile: ""}, &s)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := s.log.Record(r, body, true, nil)
	path := r.URL.Path
	if r.Method != http.MethodPost || !strings.Contains(path, "/models/") {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(path, ":countTokens") {
		writeJSON(w, map[string]any{"totalTokens": 10})
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	user := req.latestUserText()
	if s.limit.Hit(user) {
		s.limit.Gemini(w)
		return
	}
	var parts []map[string]any
	switch out, ok := req.pendingToolResponse(); {
	case ok:
		parts = textParts(fmt.Sprintf("tool done %d: %s", n, start(out)))
	case s.toolWord != "" && strings.Contains(user, s.toolWord):
		parts = []map[string]any{{"functionCall": map[string]any{
			"name": "run_shell_command",
			"args": map[string]any{"command": s.toolCmd, "description": "run the fake tool"},
		}}}
	case s.mcpWord != "" && strings.Contains(user, s.mcpWord) && req.declares(s.mcpTool):
		after := mcpText(user, s.mcpWord)
		parts = []map[string]any{{"functionCall": map[string]any{"name": s.mcpTool, "args": map[string]any{"text": after}}}}
	default:
		parts = textParts(fmt.Sprintf("ack %d: %s", n, start(user)))
	}
	if !strings.HasSuffix(path, ":streamGenerateContent") {
		writeJSON(w, chunk(parts, true))
		return
	}
	delay := s.pace.For(user)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, p := range parts {
		if i > 0 && delay > 0 {
			time.Sleep(delay)
		}
		b, _ := json.Marshal(chunk([]map[string]any{p}, i == len(parts)-1))
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// chunk is one GenerateContentResponse carrying parts; the last one ends
// the candidate and reports usage.
func chunk(parts []map[string]any, last bool) map[string]any {
	cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": "fake"}
	if last {
		cand["finishReason"] = "STOP"
		c["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	}
	return c
}

// textParts splits text into one part per word, the way a stream arrives.
func textParts(text string) []map[string]any {
	var out []map[string]any
	for _, w := range strings.SplitAfter(text, " ") {
		out = append(out, map[string]any{"text": w})
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// request is the part of a GenerateContentRequest the fake reads.
type request struct {
	Contents []content `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// declares reports whether the request offers the function name.
func (r request) declares(name string) bool {
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string          `json:"text"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

// latestUserText is the text of the last user part that is not context
// Gemini CLI adds by itself (<session_context> and the like).
func (r request) latestUserText() string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role != "user" {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			if t := strings.TrimSpace(c.Parts[j].Text); t != "" && !strings.HasPrefix(t, "<") {
				return t
			}
		}
	}
	return ""
}

// pendingToolResponse is the function response in the last content, i.e.
// the model must now answer the call's result.
func (r request) pendingToolResponse() (string, bool) {
	if len(r.Contents) == 0 {
		return "", false
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if len(p.FunctionResponse) > 0 {
			return string(p.FunctionResponse), true
		}
	}
	return "", false
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
