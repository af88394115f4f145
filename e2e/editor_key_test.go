package e2e_test

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func (e *editorProc) promptKeyed(id sdk.SessionId, text, key string) (sdk.StopReason, error) {
	ctx, cancel := editorCtx()
	defer cancel()
	resp, err := e.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)},
		Meta: map[string]any{"kandev": map[string]any{"key": key}}})
	return resp.StopReason, err
}

func TestEditor_APromptRetriedWithTheSameMetaKeyIsSentOnceAndAnsweredAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	const msg = "/say EDITOR-KEYED"
	for i := 0; i < 2; i++ {
		stop, err := ed.promptKeyed(id, msg, "ed-1")
		if err != nil || stop != sdk.StopReasonEndTurn {
			t.Fatalf("try %d: stop %q, err %v\n%s", i, stop, err, ed.stderr)
		}
		if got := chunkText(ed.take(id), "agent"); !strings.Contains(got, "EDITOR-KEYED") {
			t.Fatalf("try %d: the editor was shown %q", i, got)
		}
	}
	// From the shell, the same key: the same turn again, nothing sent.
	if r := w.mustRun("prompt", string(id), "--key", "ed-1", "--linger", "0", msg); !strings.Contains(r.stdout, "EDITOR-KEYED") {
		t.Fatalf("kandev prompt --key with the editor's key: %s", r)
	}
	if n := w.received(msg); n != 1 {
		t.Fatalf("the agent received the message %d times, want 1", n)
	}
	if n := len(keyedTurns(w.events(string(id)), "ed-1")); n != 1 {
		t.Fatalf("%d turns carry the key", n)
	}
	ed.quit()
}
