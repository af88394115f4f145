package demoagent

import (
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
