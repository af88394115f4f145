package demoagent

import (
	"testing"
	"time"

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

func TestLimitDirective_SendsTheRateLimitInfoClaudesAdapterSends(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir()}, newClient(true))
	id := p.newSession(t, t.TempDir())
	before := time.Now().Unix()
	_, us := p.prompt(t, id, "/limit 96 3600\n/say after")
	var info map[string]any
	spokeAfter := false
	for _, u := range us {
		if u.UsageUpdate != nil && u.UsageUpdate.Meta != nil {
			info, _ = u.UsageUpdate.Meta["_claude/rateLimit"].(map[string]any)
		}
		spokeAfter = spokeAfter || info != nil && u.AgentMessageChunk != nil
	}
	if info == nil {
		t.Fatalf("no usage_update with _meta[\"_claude/rateLimit\"]: %s", mustJSON(t, us))
	}
	reset, _ := info["resetsAt"].(float64)
	if info["status"] != "allowed_warning" || info["rateLimitType"] != "five_hour" || info["utilization"] != 0.96 ||
		int64(reset) < before+3600 || int64(reset) > before+3602 {
		t.Fatalf("rate limit info %s", mustJSON(t, info))
	}
	// The turn goes on after it.
	if !spokeAfter {
		t.Fatal("the turn stopped at /limit PERCENT RESET_SECONDS")
	}
	// "-" leaves the reset out; 100 or more is rejected.
	_, us = p.prompt(t, id, "/limit 100 -")
	for _, u := range us {
		if u.UsageUpdate != nil && u.UsageUpdate.Meta != nil {
			info = u.UsageUpdate.Meta["_claude/rateLimit"].(map[string]any)
		}
	}
	if _, has := info["resetsAt"]; has || info["status"] != "rejected" {
		t.Fatalf("/limit 100 -: %s", mustJSON(t, info))
	}
}
