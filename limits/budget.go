package limits

import (
	"fmt"
	"time"

	"github.com/kandev/kandev/state"
)

// Budget is [limits] after_reset_turns and after_reset_usd: how much
// unattended continuation may do after a reset before it waits for a
// person (0: no bound).
type Budget struct {
	Turns int
	USD   float64
}

// StartAfterReset is the count that begins when an unattended wake finds
// the limit reset: nothing done yet, the cost so far as its base.
func StartAfterReset(reset time.Time, costNow float64) *state.AfterReset {
	return &state.AfterReset{Since: reset.UTC(), CostAtReset: costNow}
}

// Exhausted says why the next unattended turn after the reset must wait
// for a person ("" when the budget allows it): after_reset_turns turns
// started, or after_reset_usd spent since the reset.
func Exhausted(ar *state.AfterReset, costNow float64, b Budget) string {
	if ar == nil {
		return ""
	}
	if ar.Exhausted != "" {
		return ar.Exhausted
	}
	spent := costNow - ar.CostAtReset
	switch {
	case b.Turns > 0 && ar.Turns >= b.Turns:
		return fmt.Sprintf("unattended continuation ran %d turn(s) since the reset at %s ([limits] after_reset_turns %d)", ar.Turns, ar.Since.Local().Format(time.RFC3339), b.Turns)
	case b.USD > 0 && spent >= b.USD-1e-9:
		return fmt.Sprintf("unattended continuation spent %.4g USD since the reset at %s ([limits] after_reset_usd %.4g)", spent, ar.Since.Local().Format(time.RFC3339), b.USD)
	}
	return ""
}

// WakeSummary is one wake's report: "resumed N turns, spent X".
func WakeSummary(turns int, spent float64, currency string) string {
	if currency == "" {
		currency = "USD"
	}
	return fmt.Sprintf("resumed %d turn(s), spent %.4g %s", turns, spent, currency)
}
