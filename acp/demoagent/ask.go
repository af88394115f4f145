package demoagent

import (
	"bytes"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// ask puts question to the person (elicitation/create, a form with one
// string field, answer) and says what came back.
func (t *turn) ask(question string) error {
	t.a.mu.Lock()
	ok := t.a.elicit
	t.a.mu.Unlock()
	if !ok {
		return t.message(roleAgent, "Cannot ask: the client does not support elicitation.")
	}
	resp, err := t.a.client().UnstableCreateElicitation(t.ctx, acp.UnstableCreateElicitationRequest{Form: &acp.UnstableCreateElicitationForm{
		Meta:    map[string]any{scopeKey: t.s.file.ID}, // the session scope, set on the way out
		Message: question,
		RequestedSchema: acp.UnstableElicitationSchema{
			Type:       acp.UnstableElicitationSchemaTypeObject,
			Properties: map[string]any{"answer": map[string]any{"type": "string", "title": question}},
			Required:   []string{"answer"},
		},
	}})
	switch {
	case err != nil:
		if t.ctx.Err() != nil {
			return t.ctx.Err()
		}
		return t.message(roleAgent, "Could not ask: "+errText(err))
	case resp.Accept != nil:
		return t.message(roleAgent, fmt.Sprintf("answer: %v", resp.Accept.Content["answer"]))
	case resp.Cancel != nil:
		return t.message(roleAgent, "The question was cancelled.")
	}
	return t.message(roleAgent, "The question was declined.")
}

// The published protocol ties an elicitation to its session (sessionId in
// the request's params); the SDK's form type has no such field, so the
// session travels in _meta under scopeKey and withSessionScope moves it
// into the params on the way out (lockedWriter).
const scopeKey = "kandevDemoSession"

var elicitMethod = []byte(`"elicitation/create"`)

// withSessionScope gives an elicitation/create request its sessionId.
func withSessionScope(line []byte) ([]byte, bool) {
	if !bytes.Contains(line, elicitMethod) {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil || m["method"] != "elicitation/create" {
		return nil, false
	}
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	sid, ok := meta[scopeKey].(string)
	if !ok {
		return nil, false
	}
	params["sessionId"] = sid
	delete(meta, scopeKey)
	if len(meta) == 0 {
		delete(params, "_meta")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return append(b, '\n'), true
}
