package limits

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kandev/kandev/state"
)

// ClaudeMetaKey is the _meta key under which Claude's ACP adapter puts the
// Claude SDK's rate limit info on a usage_update.
const ClaudeMetaKey = "_claude/rateLimit"

// MaxResetAhead is the furthest ahead a reset time is believed: the longest
// window agents report is a week, so a month is generous. A reset further
// out is ignored: waking then would be waking never.
const MaxResetAhead = 31 * 24 * time.Hour

// claudeInfo is the Claude SDK's SDKRateLimitInfo as the adapter forwards
// it: resetsAt in Unix seconds, utilization a fraction of the window.
type claudeInfo struct {
	Status        *string      `json:"status"`
	ResetsAt      *json.Number `json:"resetsAt"`
	RateLimitType *string      `json:"rateLimitType"`
	Utilization   *json.Number `json:"utilization"`
}

// FromClaude reads the adapter's _claude/rateLimit object into a window,
// made sane by Normalize; ok is false when raw is not an object at all.
func FromClaude(raw json.RawMessage, now time.Time) (state.RateWindow, bool) {
	var c claudeInfo
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return state.RateWindow{}, false
	}
	in := Reported{Source: "claude"}
	if c.Status != nil {
		in.Status = *c.Status
	}
	if c.RateLimitType != nil {
		in.Window = *c.RateLimitType
	}
	if c.Utilization != nil {
		if f, err := c.Utilization.Float64(); err == nil {
			pct := f * 100
			in.UsedPercent = &pct
		}
	}
	if c.ResetsAt != nil {
		if f, err := c.ResetsAt.Float64(); err == nil {
			in.ResetsAt = &f
		}
	}
	return Normalize(in, now), true
}

// Reported is a window as an agent reported it, before Normalize.
type Reported struct {
	Window, Status, Source string
	UsedPercent            *float64 // 0 to 100
	ResetsAt               *float64 // Unix seconds (milliseconds are recognised)
}

// Normalize makes a reported window sane: a percentage outside 0 to 100 is
// clamped, a reset time in the past or more than MaxResetAhead ahead is
// dropped (so nothing wakes in a tight loop, or never), and a missing
// field is left unknown. Problem says what was changed.
func Normalize(r Reported, now time.Time) state.RateWindow {
	w := state.RateWindow{Window: r.Window, Status: r.Status, Source: r.Source, ReportedAt: now.UTC()}
	var problems []string
	if p := r.UsedPercent; p != nil {
		v := *p
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			problems = append(problems, "a used percentage that is not a number was ignored")
		case v > 100:
			problems = append(problems, fmt.Sprintf("used %.0f%% was clamped to 100%%", v))
			v = 100
			w.UsedPercent = &v
		case v < 0:
			problems = append(problems, fmt.Sprintf("used %.0f%% was clamped to 0%%", v))
			v = 0
			w.UsedPercent = &v
		default:
			v = math.Round(v*10) / 10
			w.UsedPercent = &v
		}
	}
	if r.ResetsAt != nil {
		secs := *r.ResetsAt
		if secs > 1e12 { // milliseconds
			secs /= 1000
		}
		t := time.Unix(int64(secs), 0).UTC()
		switch {
		case math.IsNaN(secs) || secs <= 0:
			problems = append(problems, "a reset time that is not a time was ignored")
		case !t.After(now):
			problems = append(problems, "a reset time in the past ("+t.Format(time.RFC3339)+") was ignored")
		case t.Sub(now) > MaxResetAhead:
			problems = append(problems, "a reset time more than 31 days ahead ("+t.Format(time.RFC3339)+") was ignored")
		default:
			w.ResetsAt = &t
		}
	}
	if r.UsedPercent == nil && r.ResetsAt == nil && r.Status == "" {
		problems = append(problems, "the report carried no status, used percentage or reset time")
	}
	w.Problem = strings.Join(problems, "; ")
	return w
}

// Describe is a window in one line: "five_hour 96% used, resets at T".
func Describe(w *state.RateWindow) string {
	if w == nil {
		return ""
	}
	name := w.Window
	if name == "" {
		name = "usage window"
	}
	parts := []string{name}
	if w.UsedPercent != nil {
		parts[0] += fmt.Sprintf(" %s%% used", trimFloat(*w.UsedPercent))
	}
	if w.Status != "" {
		parts = append(parts, "status "+w.Status)
	}
	if w.ResetsAt != nil {
		parts = append(parts, "resets at "+w.ResetsAt.Local().Format(time.RFC3339))
	} else {
		parts = append(parts, "reset time unknown")
	}
	return strings.Join(parts, ", ")
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}
