package demoagent

import (
	"strings"

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
