package demoagent

import (
	"strconv"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Usage the demo agent reports at the end of each turn: a context window of
// demoContextSize tokens, a word of the conversation counted as a token, and
// demoTurnCost per turn of the conversation it holds, cumulative.
const (
	demoContextSize = 100000
	demoTurnCost    = 0.001
)

// usage is the usage_update for the conversation as it stands.
func usage(f *sessionFile) acp.SessionUpdate {
	words, turns := 0, 0
	for _, e := range f.Entries {
		words += len(strings.Fields(e.Text)) + 2*e.Bulk // "chunk i" is two words
		if e.Role == roleUser {
			turns++
		}
	}
	// Divided rather than multiplied, so 3 turns cost exactly what 0.003 reads as.
	amount := float64(turns) / (1 / demoTurnCost)
	return acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{
		Used: words, Size: demoContextSize, Cost: &acp.Cost{Amount: amount, Currency: "USD"},
	}}
}

// rateLimitUpdate is /limit PERCENT RESET_SECONDS: a usage_update that
// carries, in its _meta under "_claude/rateLimit", the Claude SDK's rate
// limit info as Claude's ACP adapter (0.101.0) forwards it: status,
// resetsAt in Unix seconds, rateLimitType and utilization as a fraction.
// RESET_SECONDS "-" leaves resetsAt out; any number is sent as given, so a
// test can send nonsense (a reset in the past, 250 percent).
func rateLimitUpdate(f *sessionFile, percent, reset string, now time.Time) (acp.SessionUpdate, bool) {
	pct, err := strconv.ParseFloat(percent, 64)
	if err != nil {
		return acp.SessionUpdate{}, false
	}
	status := "allowed"
	switch {
	case pct >= 100:
		status = "rejected"
	case pct >= 80:
		status = "allowed_warning"
	}
	info := map[string]any{"status": status, "rateLimitType": "five_hour", "utilization": pct / 100,
		"isUsingOverage": false}
	if reset != "-" {
		secs, err := strconv.ParseInt(reset, 10, 64)
		if err != nil {
			return acp.SessionUpdate{}, false
		}
		info["resetsAt"] = now.Unix() + secs
	}
	u := usage(f).UsageUpdate
	return acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{
		Used: u.Used, Size: u.Size, Meta: map[string]any{"_claude/rateLimit": info},
	}}, true
}
