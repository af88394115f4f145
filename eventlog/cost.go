package eventlog

import (
	"math"
	"strconv"
)

// Cost is an amount of money in one currency, as agents report it.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// String renders the cost the way kandev prints money: up to six decimals,
// trailing zeros dropped ("0.002 USD").
func (c Cost) String() string {
	s := strconv.FormatFloat(roundCost(c.Amount), 'f', -1, 64)
	if c.Currency == "" {
		return s
	}
	return s + " " + c.Currency
}

// Rounded is c without the float noise that sums of figures carry.
func (c Cost) Rounded() Cost { return Cost{Amount: roundCost(c.Amount), Currency: c.Currency} }

// roundCost keeps six decimals: sums of agent figures carry float noise
// below a millionth that no one wants to read.
func roundCost(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// Tokens are a prompt response's token counts for its turn.
type Tokens struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	Total       int64 `json:"total"`
	CachedRead  int64 `json:"cached_read,omitempty"`
	CachedWrite int64 `json:"cached_write,omitempty"`
	Thought     int64 `json:"thought,omitempty"`
}

// Add sums two token counts.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{Input: t.Input + o.Input, Output: t.Output + o.Output, Total: t.Total + o.Total,
		CachedRead: t.CachedRead + o.CachedRead, CachedWrite: t.CachedWrite + o.CachedWrite, Thought: t.Thought + o.Thought}
}
