package fakemodel

// The OpenAI Chat Completions API, as OpenCode and Copilot CLI (with its
// own provider key) use it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// chat answers POST /v1/chat/completions, streamed in chunks or as one
// chat.completion object. Every request is numbered and logged with its
// "model" and "tools" (false when it offers none: the title or summary
// requests some agents make on the side). The rate limit applies to
// streamed requests only.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, body []byte) {
	var req chatRequest
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
	user := req.latestUserText()
	out, pending := req.pendingToolResult()
	rep := s.decide(turn{n: n, user: user, out: out, pending: pending, offers: req.offers})
	if rep.status != 0 {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"scripted failure %d"}}`, rep.status), rep.status)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", n)
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rep.text}
		finish := "stop"
		if rep.call != nil {
			msg["content"], finish = nil, "tool_calls"
			msg["tool_calls"] = []any{map[string]any{"id": "call_" + id, "type": "function",
				"function": map[string]any{"name": rep.call.name, "arguments": rep.call.args}}}
		}
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
		return
	}
	if s.Limit.Hit(user) {
		s.Limit.OpenAIRateLimit(w)
		return
	}
	st := newSSE(w, s.Pace.For(user))
	chunk := func(choices []any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		st.send("", c)
	}
	delta := func(d map[string]any, finish any) {
		chunk([]any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}, nil)
	}
	if c := rep.call; c != nil {
		delta(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": "call_" + id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}}}, nil)
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": c.args}}}}, nil)
		delta(map[string]any{}, "tool_calls")
	} else {
		delta(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, w := range words(rep.text) {
			delta(map[string]any{"content": w}, nil)
		}
		delta(map[string]any{}, "stop")
	}
	chunk([]any{}, map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
	st.send("", "[DONE]")
}

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (r chatRequest) offers(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

func (r chatRequest) latestUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return WithoutContext(textOf(r.Messages[i].Content))
		}
	}
	return ""
}

// WithoutContext drops the <tag>...</tag> blocks at the start of a user
// text: context an agent adds before what the user typed (Copilot's
// <current_datetime>).
func WithoutContext(s string) string {
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
func (r chatRequest) pendingToolResult() (string, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		switch r.Messages[i].Role {
		case "tool":
			return textOf(r.Messages[i].Content), true
		case "user":
			return "", false
		}
	}
	return "", false
}
