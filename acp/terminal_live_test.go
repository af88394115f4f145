package acp

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestLiveOutput_ASecretPrintedAcrossTwoFlushesIsRedactedWhole(t *testing.T) {
	var got []string
	l := newLiveOutput(eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "terminal-term-1"}, func(e *eventlog.Event) { got = append(got, e.Content) })
	secret := "ghp_" + strings.Repeat("Z9y8", 9)
	l.write([]byte("token: " + secret[:10]))
	l.mu.Lock()
	l.flushLocked(false)
	l.mu.Unlock()
	l.write([]byte(secret[10:] + "\ndone\n"))
	l.end()
	all := strings.Join(got, "")
	if strings.Contains(all, secret[:10]) || !strings.Contains(all, "done") {
		t.Fatalf("live output %q", got)
	}
}

func TestLiveOutput_StopsAtItsBoundAtACharacterBoundary(t *testing.T) {
	var got strings.Builder
	l := newLiveOutput(eventlog.Event{}, func(e *eventlog.Event) { got.WriteString(e.Content) })
	l.write([]byte(strings.Repeat("é", liveTerminalOutput))) // 2 bytes each: twice the bound
	l.write([]byte("more"))
	l.end()
	out := strings.TrimSuffix(got.String(), liveCutNote)
	if len(out) > liveTerminalOutput || strings.Contains(out, "more") || !strings.HasSuffix(got.String(), liveCutNote) || strings.ContainsRune(out, '\uFFFD') {
		t.Fatalf("%d bytes, ends %q", len(out), got.String()[max(0, got.Len()-80):])
	}
}
