package fakemodel

// The OpenAI Responses API, as Codex uses it: always streamed.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responses answers POST /v1/responses with an event stream; every request
// is numbered and logged with its session_id header. The shell call goes
// to the shell tool the request offers (with -tool-escalate, asking to run
// outside the sandbox). The MCP tool is offered as Codex offers one: a
// function in the namespace tool mcp__SERVER, or one function named
// mcp__SERVER__TOOL; when Codex defers MCP tools behind its tool_search
// tool, the answer is a tool_search_call first, and the call once the
// search's output brought the tool.
func (s *Server) responses(w http.ResponseWriter, r *http.Request, body []byte) {
	n := s.log.Record(r, body, true, map[string]any{"session_id": r.Header.Get("session_id") + r.Header.Get("session-id")})
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	user := req.latestUserText()
	if s.Limit.Hit(user) {
		s.Limit.OpenAIUsageLimit(w)
		return
	}
	out, pending := req.pendingToolOutput()
	rep := s.decide(turn{n: n, user: user, out: out, pending: pending,
		offers: func(name string) bool { return req.offersMCP(name) == name },
		shell:  func(cmd string) *call { return req.shellCall(cmd, s.Escalate) },
		mcp: func(text string) (reply, bool) {
			ns := req.offersMCP(s.MCPTool)
			switch {
			case ns == "" && req.offersToolSearch() && !req.searchedTools():
				// Codex 0.166 defers MCP tools behind tool_search: search first.
				return reply{search: strings.ReplaceAll(strings.TrimPrefix(s.MCPTool, "mcp__"), "__", " ")}, true
			case ns == "":
				return reply{}, false
			case ns == s.MCPTool:
				ns = ""
			}
			name := strings.TrimPrefix(s.MCPTool, ns+"__")
			return reply{call: &call{namespace: ns, name: name, args: jsonString(map[string]any{"text": text})}}, true
		}})
	if rep.status != 0 {
		http.Error(w, fmt.Sprintf("scripted failure %d", rep.status), rep.status)
		return
	}
	st := &responseStream{sse: newSSE(w, s.Pace.For(user)), id: fmt.Sprintf("resp_%d", n)}
	switch {
	case rep.search != "":
		st.toolSearchCall(rep.search)
	case rep.call != nil:
		st.functionCall(rep.call.namespace, rep.call.name, rep.call.args)
	default:
		st.message(rep.text)
	}
}

// responsesRequest is the part of a Responses request the fake reads.
type responsesRequest struct {
	Input []item         `json:"input"`
	Tools []responseTool `json:"tools"`
}

type item struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
	Tools   []responseTool  `json:"tools"` // of a tool_search_output
}

// responseTool is an offered tool: a function, or a namespace of functions.
type responseTool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"` // of a namespace
}

// offersMCP is the namespace that offers tool (mcp__SERVER__TOOL), or the
// tool's own name when it is offered as one function; "" when not offered.
// The tools a tool search found (in the input) count as offered.
func (r responsesRequest) offersMCP(tool string) string {
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

// offersToolSearch reports whether the request offers Codex's tool_search.
func (r responsesRequest) offersToolSearch() bool {
	for _, t := range r.Tools {
		if t.Type == "tool_search" {
			return true
		}
	}
	return false
}

// searchedTools reports whether a tool search was answered since the latest
// user message (so its tools are what it found, and it is not repeated).
func (r responsesRequest) searchedTools() bool {
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

// latestUserText is the text of the last user message that is not context
// Codex adds by itself (environment context, instructions in angle brackets).
func (r responsesRequest) latestUserText() string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		if it.Type == "message" && it.Role == "user" {
			if t := strings.TrimSpace(textOf(it.Content)); t != "" && !strings.HasPrefix(t, "<") {
				return t
			}
		}
	}
	return ""
}

// pendingToolOutput is the output of a function call that came after the
// latest user message, i.e. the model must now answer the call's result.
func (r responsesRequest) pendingToolOutput() (string, bool) {
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

// shellCall is a call of the shell tool the request offers running cmd;
// tool names differ between Codex versions and models.
func (r responsesRequest) shellCall(cmd string, escalate bool) *call {
	offered := map[string]bool{}
	for _, t := range r.Tools {
		offered[t.Name] = true
	}
	c := &call{name: "shell"}
	a := map[string]any{"command": []string{"sh", "-c", cmd}}
	switch {
	case offered["shell_command"]:
		c.name, a = "shell_command", map[string]any{"command": cmd}
	case offered["exec_command"]:
		c.name, a = "exec_command", map[string]any{"cmd": cmd}
	}
	if escalate {
		a["sandbox_permissions"] = "require_escalated"
		a["justification"] = "the test asks for it"
	}
	c.args = jsonString(a)
	return c
}

// responseStream writes one Responses event stream.
type responseStream struct {
	*sse
	id string
}

func (st *responseStream) response(status string, output []any) map[string]any {
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

// finish streams item (added, then its middle, then done) within a whole
// response.
func (st *responseStream) finish(added, done map[string]any, middle func()) {
	st.typed("response.created", map[string]any{"response": st.response("in_progress", []any{})})
	st.typed("response.in_progress", map[string]any{"response": st.response("in_progress", []any{})})
	st.typed("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	middle()
	st.typed("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	st.typed("response.completed", map[string]any{"response": st.response("completed", []any{done})})
}

// message streams text as an assistant message, one word per delta.
func (st *responseStream) message(text string) {
	id := "msg_" + st.id
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	at := func(extra map[string]any) map[string]any {
		extra["item_id"], extra["output_index"], extra["content_index"] = id, 0, 0
		return extra
	}
	added := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}
	done := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed", "content": []any{part}}
	st.finish(added, done, func() {
		st.typed("response.content_part.added", at(map[string]any{"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
		for _, w := range words(text) {
			st.typed("response.output_text.delta", at(map[string]any{"delta": w}))
		}
		st.typed("response.output_text.done", at(map[string]any{"text": text}))
		st.typed("response.content_part.done", at(map[string]any{"part": part}))
	})
}

// functionCall streams one function call (of a tool in namespace, when
// that is not "").
func (st *responseStream) functionCall(namespace, name, args string) {
	id, callID := "fc_"+st.id, "call_"+st.id
	item := func(args, status string) map[string]any {
		m := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": args, "status": status}
		if namespace != "" {
			m["namespace"] = namespace
		}
		return m
	}
	st.finish(item("", "in_progress"), item(args, "completed"), func() {
		st.typed("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": 0, "delta": args})
		st.typed("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": 0, "arguments": args})
	})
}

// toolSearchCall streams one call of the client-run tool_search tool.
func (st *responseStream) toolSearchCall(query string) {
	done := map[string]any{"type": "tool_search_call", "id": "ts_" + st.id, "call_id": "call_" + st.id,
		"execution": "client", "status": "completed", "arguments": map[string]any{"query": query, "limit": 8}}
	st.finish(done, done, func() {})
}
