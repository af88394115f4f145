package fakemodel

// The Gemini API (generativelanguage v1beta), as Gemini CLI uses it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// gemini answers POST /v1beta/models/M:streamGenerateContent (events),
// :generateContent (one JSON reply) and :countTokens (a small count). Every
// request is numbered. The shell call is run_shell_command.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
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
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	user := req.latestUserText()
	if s.Limit.Hit(user) {
		s.Limit.Gemini(w)
		return
	}
	out, pending := req.pendingToolResponse()
	rep := s.decide(turn{n: n, user: user, out: out, pending: pending, offers: req.declares,
		shell: func(cmd string) *call {
			return &call{name: "run_shell_command", args: jsonString(map[string]any{"command": cmd, "description": "run the fake tool"})}
		}})
	if rep.status != 0 {
		http.Error(w, fmt.Sprintf("scripted failure %d", rep.status), rep.status)
		return
	}
	var parts []map[string]any
	if rep.call != nil {
		parts = []map[string]any{{"functionCall": map[string]any{"name": rep.call.name, "args": json.RawMessage(rep.call.args)}}}
	} else {
		for _, w := range words(rep.text) {
			parts = append(parts, map[string]any{"text": w})
		}
	}
	if !strings.HasSuffix(path, ":streamGenerateContent") {
		writeJSON(w, geminiChunk(parts, true))
		return
	}
	st := newSSE(w, s.Pace.For(user))
	st.eol = "\r\n"
	for i, p := range parts {
		st.send("", geminiChunk([]map[string]any{p}, i == len(parts)-1))
	}
}

// geminiChunk is one GenerateContentResponse carrying parts; the last one
// ends the candidate and reports usage.
func geminiChunk(parts []map[string]any, last bool) map[string]any {
	cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": "fake"}
	if last {
		cand["finishReason"] = "STOP"
		c["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	}
	return c
}

// geminiRequest is the part of a GenerateContentRequest the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string          `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// declares reports whether the request offers the function name.
func (r geminiRequest) declares(name string) bool {
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

// latestUserText is the text of the last user part that is not context
// Gemini CLI adds by itself (<session_context> and the like).
func (r geminiRequest) latestUserText() string {
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
func (r geminiRequest) pendingToolResponse() (string, bool) {
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
