package limits

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func pct(f float64) *float64 { return &f }
func at(d time.Duration) *time.Time {
	t := now.Add(d)
	return &t
}

func TestDecide(t *testing.T) {
	window := func(used float64, reset *time.Time) *state.RateWindow {
		return &state.RateWindow{Window: "five_hour", UsedPercent: pct(used), ResetsAt: reset}
	}
	cases := []struct {
		name string
		in   GateInput
		want Gate
	}{
		{"no window reported: go", GateInput{PauseAt: 95}, Go},
		{"below the threshold: go", GateInput{Window: window(94.9, at(time.Hour)), PauseAt: 95}, Go},
		{"at the threshold, nobody follows: wait", GateInput{Window: window(95, at(time.Hour)), PauseAt: 95}, Wait},
		{"above it, nobody follows: wait", GateInput{Window: window(100, at(time.Hour)), PauseAt: 95}, Wait},
		{"at it, a person follows: go with a warning", GateInput{Window: window(97, at(time.Hour)), PauseAt: 95, Attended: true}, Warn},
		{"pause_at_percent 100 turns it off", GateInput{Window: window(100, at(time.Hour)), PauseAt: 100}, Go},
		{"the reset has passed: a new window, go", GateInput{Window: window(99, at(-time.Second)), PauseAt: 95}, Go},
		{"the reset is exactly now: go", GateInput{Window: window(99, at(0)), PauseAt: 95}, Go},
		{"no reset time: never a wait without end", GateInput{Window: window(99, nil), PauseAt: 95}, Go},
		{"no percentage: go", GateInput{Window: &state.RateWindow{ResetsAt: at(time.Hour)}, PauseAt: 95}, Go},
		{"a lower threshold", GateInput{Window: window(50, at(time.Hour)), PauseAt: 50}, Wait},
	}
	for _, c := range cases {
		c.in.Now = now
		if got := Decide(c.in); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	secs := func(d time.Duration) *float64 { f := float64(now.Add(d).Unix()); return &f }
	cases := []struct {
		name        string
		in          Reported
		wantPct     *float64
		wantReset   *time.Time
		wantProblem string // a substring; "" means none
	}{
		{"sane", Reported{UsedPercent: pct(42), ResetsAt: secs(time.Hour)}, pct(42), at(time.Hour), ""},
		{"over 100 is clamped", Reported{UsedPercent: pct(250), ResetsAt: secs(time.Hour)}, pct(100), at(time.Hour), "clamped to 100%"},
		{"negative is clamped", Reported{UsedPercent: pct(-5), ResetsAt: secs(time.Hour)}, pct(0), at(time.Hour), "clamped to 0%"},
		{"a reset in the past is ignored", Reported{UsedPercent: pct(99), ResetsAt: secs(-time.Hour)}, pct(99), nil, "in the past"},
		{"a reset years ahead is ignored", Reported{UsedPercent: pct(99), ResetsAt: secs(3 * 365 * 24 * time.Hour)}, pct(99), nil, "31 days"},
		{"milliseconds are read as such", Reported{UsedPercent: pct(10), ResetsAt: func() *float64 { f := float64(now.Add(time.Hour).UnixMilli()); return &f }()}, pct(10), at(time.Hour), ""},
		{"missing fields stay unknown", Reported{Status: "allowed"}, nil, nil, ""},
		{"nothing at all", Reported{}, nil, nil, "no status"},
	}
	for _, c := range cases {
		w := Normalize(c.in, now)
		if (w.UsedPercent == nil) != (c.wantPct == nil) || w.UsedPercent != nil && *w.UsedPercent != *c.wantPct {
			t.Errorf("%s: used %v, want %v", c.name, w.UsedPercent, c.wantPct)
		}
		if (w.ResetsAt == nil) != (c.wantReset == nil) || w.ResetsAt != nil && !w.ResetsAt.Equal(*c.wantReset) {
			t.Errorf("%s: reset %v, want %v", c.name, w.ResetsAt, c.wantReset)
		}
		if (c.wantProblem == "") != (w.Problem == "") || !strings.Contains(w.Problem, c.wantProblem) {
			t.Errorf("%s: problem %q, want %q", c.name, w.Problem, c.wantProblem)
		}
	}
}

func TestFromClaude_ReadsTheAdaptersShape(t *testing.T) {
	raw := json.RawMessage(`{"status":"allowed_warning","resetsAt":` + itoa(now.Add(2*time.Hour).Unix()) + `,"rateLimitType":"five_hour","utilization":0.96,"isUsingOverage":false}`)
	w, ok := FromClaude(raw, now)
	if !ok || w.Window != "five_hour" || w.Status != "allowed_warning" || w.UsedPercent == nil || *w.UsedPercent != 96 || w.ResetsAt == nil || !w.ResetsAt.Equal(now.Add(2*time.Hour)) || w.Problem != "" {
		t.Fatalf("got %+v ok %v", w, ok)
	}
	if _, ok := FromClaude(json.RawMessage(`"nope"`), now); ok {
		t.Fatal("a string read as a window")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestExhausted(t *testing.T) {
	ar := func(turns int, base float64) *state.AfterReset {
		return &state.AfterReset{Since: now, Turns: turns, CostAtReset: base}
	}
	cases := []struct {
		name string
		ar   *state.AfterReset
		cost float64
		b    Budget
		want string
	}{
		{"no count: nothing to bound", nil, 9, Budget{Turns: 1}, ""},
		{"no bounds", ar(50, 0), 100, Budget{}, ""},
		{"turns left", ar(1, 0), 0, Budget{Turns: 2}, ""},
		{"turns spent", ar(2, 0), 0, Budget{Turns: 2}, "after_reset_turns 2"},
		{"money left", ar(0, 1), 1.5, Budget{USD: 1}, ""},
		{"money spent", ar(0, 1), 2, Budget{USD: 1}, "after_reset_usd 1"},
		{"recorded stays", &state.AfterReset{Exhausted: "x"}, 0, Budget{}, "x"},
	}
	for _, c := range cases {
		if got := Exhausted(c.ar, c.cost, c.b); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
