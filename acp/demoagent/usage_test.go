package demoagent

import (
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// lastUsage is the usage_update that ends a turn's updates.
func lastUsage(t *testing.T, us []acp.SessionUpdate) *acp.SessionUsageUpdate {
	t.Helper()
	if len(us) == 0 || us[len(us)-1].UsageUpdate == nil {
		t.Fatalf("the turn did not end with a usage_update: %s", mustJSON(t, us))
	}
	return us[len(us)-1].UsageUpdate
}

func TestUsage_ReportedAtTheEndOfEachTurnCumulativeOverTheConversation(t *testing.T) {
	dir := t.TempDir()
	p := start(t, Options{Dir: dir}, newClient(true))
	id := p.newSession(t, t.TempDir())
	_, us := p.prompt(t, id, "remember PINEAPPLE")
	u := lastUsage(t, us)
	// "remember PINEAPPLE" + "OK, I will remember PINEAPPLE." = 2 + 5 words.
	if u.Used != 7 || u.Size != 100000 || u.Cost == nil || u.Cost.Amount != 0.001 || u.Cost.Currency != "USD" {
		t.Errorf("first turn's usage = %s, want used 7, size 100000, cost 0.001 USD", mustJSON(t, u))
	}
	_, us = p.prompt(t, id, "recall")
	if u := lastUsage(t, us); u.Cost.Amount != 0.002 || u.Used != 7+1+6 {
		t.Errorf("second turn's usage = %s, want used 14, cost 0.002", mustJSON(t, u))
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}

	// Restored natively in another process, the conversation keeps its count.
	p = start(t, Options{Dir: dir}, newClient(true))
	if _, err := p.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: id, Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	_, us = p.prompt(t, id, "hello")
	if u := lastUsage(t, us); u.Cost.Amount != 0.003 {
		t.Errorf("third turn after resume costs %v in all, want 0.003", u.Cost.Amount)
	}
}
