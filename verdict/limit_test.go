package verdict

import (
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

func TestResumeAfterLimit_OnlyWhenAskedToldWhenAndWithinTheBudget(t *testing.T) {
	reset := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	told := &state.UsageLimit{ResetAt: &reset}
	cases := []struct {
		name     string
		enabled  bool
		limit    *state.UsageLimit
		attempts int
		want     bool
	}{
		{"asked, told when, first time", true, told, 0, true},
		{"asked, told when, last of the budget", true, told, 2, true},
		{"budget spent: that many in a row", true, told, 3, false},
		{"not asked", false, told, 0, false},
		{"the agent did not say when", true, &state.UsageLimit{}, 0, false},
		{"no limit", true, nil, 0, false},
	}
	for _, c := range cases {
		if got := ResumeAfterLimit(c.enabled, c.limit, c.attempts, 3); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLimitLifted_AtTheResetTime(t *testing.T) {
	reset := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	l := &state.UsageLimit{ResetAt: &reset}
	if LimitLifted(l, reset.Add(-time.Second)) || !LimitLifted(l, reset) || LimitLifted(&state.UsageLimit{}, reset) || LimitLifted(nil, reset) {
		t.Fatal("LimitLifted disagrees with the reset time")
	}
}
