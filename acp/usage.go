package acp

import (
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/state"
)

// usageEvent turns a usage_update (the agent's context window and its
// cumulative cost) into a usage event; nil when it does not decode.
func usageEvent(raw string) *state.Event {
	var u sdk.SessionUsageUpdate
	if json.Unmarshal([]byte(raw), &u) != nil {
		return nil
	}
	used, size := int64(u.Used), int64(u.Size)
	e := &state.Event{Type: state.EventUsage, Used: &used, Size: &size}
	if u.Cost != nil {
		e.Cost = &state.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
	}
	return e
}

// promptUsageEvent is the usage event of a prompt response's token counts.
func promptUsageEvent(u *sdk.Usage) *state.Event {
	t := state.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), Total: int64(u.TotalTokens)}
	for _, f := range []struct {
		from *int
		to   *int64
	}{{u.CachedReadTokens, &t.CachedRead}, {u.CachedWriteTokens, &t.CachedWrite}, {u.ThoughtTokens, &t.Thought}} {
		if f.from != nil {
			*f.to = int64(*f.from)
		}
	}
	return &state.Event{Type: state.EventUsage, Tokens: &t}
}
