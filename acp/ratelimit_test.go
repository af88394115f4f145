package acp

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// claude-agent-acp 0.101.0 (dist/acp-agent.js, case "rate_limit_event")
// sends the Claude SDK's SDKRateLimitInfo on a usage_update with used and
// size only: {sessionUpdate: "usage_update", used, size, _meta:
// {"_claude/rateLimit": message.rate_limit_info}}.
func TestUpdateToEvents_AClaudeRateLimitUpdateIsAUsageAndALimitEvent(t *testing.T) {
	reset := time.Now().Add(3 * time.Hour).Unix()
	params := `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":51234,"size":200000,"_meta":{"_claude/rateLimit":{"status":"allowed_warning","resetsAt":` +
		strconv.FormatInt(reset, 10) + `,"rateLimitType":"seven_day","utilization":0.812,"isUsingOverage":false,"surpassedThreshold":0.75}}}}`
	evs := updateToEvents([]byte(params), toolNames{})
	if len(evs) != 2 || evs[0].Type != eventlog.EventUsage || evs[1].Type != eventlog.EventLimit {
		t.Fatalf("want a usage and a limit event, got %d: %+v", len(evs), evs)
	}
	if *evs[0].Used != 51234 || *evs[0].Size != 200000 || evs[0].Cost != nil {
		t.Fatalf("usage event %+v", evs[0])
	}
	var w state.RateWindow
	if err := json.Unmarshal(evs[1].Data, &w); err != nil {
		t.Fatal(err)
	}
	if w.Window != "seven_day" || w.Status != "allowed_warning" || w.UsedPercent == nil || *w.UsedPercent != 81.2 || w.ResetsAt == nil || w.ResetsAt.Unix() != reset || w.Source != "claude" {
		t.Fatalf("window %+v", w)
	}
	if evs[1].Summary == "" {
		t.Fatal("the limit event says nothing in words")
	}
}

func TestUpdateToEvents_OtherUpdatesAreOneEvent(t *testing.T) {
	for _, params := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2,"_meta":{"_claude/rateLimit":"nonsense"}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`,
	} {
		if evs := updateToEvents([]byte(params), toolNames{}); len(evs) != 1 {
			t.Errorf("%s: %d events", params, len(evs))
		}
	}
}
