package fakemodel

// The Anthropic Messages API, as Claude Code uses it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// messages answers POST /v1/messages, streamed or as one message. Side
// requests (see messagesRequest.side) are not numbered (n 0 in the log) and
// get a fixed text, or {"title": -title} when they ask for the session's
// title; the anthropic-beta header is logged as "beta".
func (s *Server) messages(w http.ResponseWriter, r *http.Request, body []byte) {
	isMessages := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages")
	var req messagesRequest
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
		text := "fake side answer"
		if req.asksTitle() {
			text = jsonString(map[string]string{"title": s.Title})
		}
		writeMessage(w, req, 0, 0, []block{{Type: "text", Text: text}})
		return
	}
	if s.Limit.Hit(user) {
		s.Limit.Anthropic(w)
		return
	}
	if s.Window.Reports(user) {
		s.Window.Anthropic(w.Header())
	}
	out, pending := req.pendingToolResult()
	rep := s.decide(turn{n: n, user: user, out: out, pending: pending, offers: req.offers,
		shell: func(cmd string) *call {
			if !req.offers("Bash") {
				return nil
			}
			return &call{name: "Bash", args: jsonString(map[string]any{"command": cmd, "description": "Run the fake tool command"})}
		}})
	if rep.status != 0 {
		http.Error(w, fmt.Sprintf("scripted failure %d", rep.status), rep.status)
		return
	}
	blocks := []block{{Type: "text", Text: rep.text}}
	if rep.call != nil {
		blocks = []block{{Type: "tool_use", ID: fmt.Sprintf("toolu_fake_%d", n), Name: rep.call.name, Input: json.RawMessage(rep.call.args)}}
	}
	writeMessage(w, req, n, s.Pace.For(user), blocks)
}

// messagesRequest is the part of a Messages request the fake reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
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
func (r messagesRequest) asksTitle() bool {
	_, ok := r.OutputConfig.Format.Schema.Properties["title"]
	return ok && len(r.OutputConfig.Format.Schema.Properties) == 1
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
func blocks(content json.RawMessage) []block {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	json.Unmarshal(content, &bs)
	return bs
}

// side reports whether the request is one of Claude Code's side requests,
// not a step of the agent's loop: those that offer no tools (the session's
// title, probes) and the next-prompt suggestion, which forks the
// conversation with the loop's tools. They are answered with a fixed text
// and not numbered, so N counts the loop's requests alone.
func (r messagesRequest) side(latestUser string) bool {
	return len(r.Tools) == 0 || strings.HasPrefix(latestUser, "[SUGGESTION MODE")
}

// latestUserText is the text of the last user text block that is not
// context Claude Code adds by itself (reminders in angle brackets).
func (r messagesRequest) latestUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		bs := blocks(r.Messages[i].Content)
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
func (r messagesRequest) pendingToolResult() (string, bool) {
	// Claude Code may put system messages after the conversation's last turn.
	last := len(r.Messages) - 1
	for last >= 0 && r.Messages[last].Role == "system" {
		last--
	}
	if last < 0 || r.Messages[last].Role != "user" {
		return "", false
	}
	for _, b := range blocks(r.Messages[last].Content) {
		if b.Type == "tool_result" {
			return textOf(b.Content), true
		}
	}
	return "", false
}

func (r messagesRequest) offers(tool string) bool {
	for _, t := range r.Tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}

var messagesUsage = map[string]any{"input_tokens": 10, "output_tokens": 5,
	"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

// writeMessage answers with blocks: one JSON message, or when the request
// asks for a stream, events with text one word per delta and a tool's
// input in one delta.
func writeMessage(w http.ResponseWriter, req messagesRequest, n int, delay time.Duration, blocks []block) {
	stop := "end_turn"
	if blocks[0].Type == "tool_use" {
		stop = "tool_use"
	}
	msg := map[string]any{"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": req.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": messagesUsage}
	if !req.Stream {
		writeJSON(w, msg)
		return
	}
	st := newSSE(w, delay)
	msg["content"], msg["stop_reason"] = []any{}, nil
	st.typed("message_start", map[string]any{"message": msg})
	for i, b := range blocks {
		switch b.Type {
		case "text":
			st.typed("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, word := range words(b.Text) {
				st.typed("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": word}})
			}
		case "tool_use":
			st.typed("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			st.typed("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
		}
		st.typed("content_block_stop", map[string]any{"index": i})
	}
	st.typed("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	st.typed("message_stop", map[string]any{})
}
