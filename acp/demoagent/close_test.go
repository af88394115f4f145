package demoagent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

func TestClose_CancelsTheRunningTurn(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir()}, newClient(true))
	id := p.newSession(t, t.TempDir())
	done := make(chan acp.StopReason, 1)
	go func() {
		resp, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("/sleep 30000")}})
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- resp.StopReason
	}()
	time.Sleep(200 * time.Millisecond) // the turn is in its sleep
	closed := time.Now()
	if _, err := p.CloseSession(ctx(t), acp.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	select {
	case sr := <-done:
		if sr != acp.StopReasonCancelled {
			t.Fatalf("the closed session's turn ended %q, want cancelled", sr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("session/close did not end the running turn")
	}
	if took := time.Since(closed); took > 20*time.Second {
		t.Fatalf("close took %s", took)
	}
}

func TestDelete_OfAnUnknownSessionSucceeds(t *testing.T) {
	dir := t.TempDir()
	p := start(t, Options{Dir: dir}, newClient(true))
	if p.init.AgentCapabilities.SessionCapabilities.Delete == nil {
		t.Fatal("session/delete is not advertised")
	}
	for _, sid := range []string{"demo-0000000000000000", "../escape", ""} {
		if _, err := p.UnstableDeleteSession(ctx(t), acp.UnstableDeleteSessionRequest{SessionId: acp.SessionId(sid)}); err != nil {
			t.Fatalf("delete of unknown session %q: %v", sid, err)
		}
	}
	id := p.newSession(t, t.TempDir())
	if _, err := p.UnstableDeleteSession(ctx(t), acp.UnstableDeleteSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, string(id)+".json")); !os.IsNotExist(err) {
		t.Fatalf("the deleted session's file is still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, deletedLog)); string(b) != string(id)+"\n" {
		t.Fatalf("deleted log = %q", b)
	}
}
