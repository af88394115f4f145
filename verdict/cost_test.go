package verdict

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestCostCapReached(t *testing.T) {
	spent := func(v float64) *state.UsageTotals {
		return &state.UsageTotals{Cost: &eventlog.Cost{Amount: v, Currency: "USD"}}
	}
	cases := []struct {
		name string
		u    *state.UsageTotals
		max  float64
		want bool
	}{
		{"no cap", spent(5), 0, false},
		{"no cost reported", &state.UsageTotals{Used: 5}, 0.001, false},
		{"under the cap", spent(0.001), 0.002, false},
		{"at the cap", spent(0.002), 0.002, true},
		{"at the cap but for float noise", spent(0.1 + 0.2), 0.3, true},
		{"over the cap", spent(0.003), 0.002, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, got := CostCapReached(tc.u, tc.max)
			if got != tc.want || got && !strings.Contains(msg, "of its max_cost") {
				t.Fatalf("CostCapReached = %q, %v; want %v", msg, got, tc.want)
			}
		})
	}
}
