package acp

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// ErrRateLimited ends a command whose turn hit the agent's usage or rate
// limit (exit 8).
var ErrRateLimited = errors.New("rate limited")

// UsageLimitAnswer is what an agent said when it refused a turn over its
// usage or rate limit.
type UsageLimitAnswer struct {
	Said    string     // the agent's words, one line
	ResetAt *time.Time // when it said the limit resets (nil: it did not)
}

// RecognizeLimit reads an agent's answer to session/prompt as a usage or
// rate limit, in the shapes the real agents send it (see limit_test.go):
//   - Claude Code's ACP adapter: -32603 with the SDK's result text as data,
//     "Claude AI usage limit reached|<unix seconds>" or "You've hit your
//     limit · resets 3pm (Europe/Berlin)", or the API's 429 rate_limit_error;
//   - codex-acp: -32603 with data {message, codex_error_info:
//     "usage_limit_exceeded"} ("... try again in 2 hours 5 minutes");
//   - Gemini CLI 0.61: error code 429 "You have exhausted your daily quota on
//     this model."; the API's 429 RESOURCE_EXHAUSTED with a RetryInfo delay;
//   - Copilot and OpenCode: the provider's 429 "rate limit" text, with a
//     retry-after when given.
//
// It is a pure function of the error and the clock.
func RecognizeLimit(err error, now time.Time) (UsageLimitAnswer, bool) {
	var re *sdk.RequestError
	var text string
	var info string
	if errors.As(err, &re) {
		text = re.Message
		if re.Code == 429 {
			// The Gemini CLI answers a quota with the HTTP status as the code.
			info = "rate_limit_exceeded"
		}
		switch d := re.Data.(type) {
		case string:
			text += " " + d
		case nil:
		default:
			b, _ := json.Marshal(d)
			text += " " + string(b)
			if m, ok := d.(map[string]any); ok {
				if ci, ok := m["codex_error_info"].(string); ok {
					info = ci
				}
				if msg, ok := m["message"].(string); ok {
					text = re.Message + " " + msg + " " + string(b)
				}
			}
		}
	} else if err != nil {
		text = err.Error()
	}
	return RecognizeLimitText(text, info, now)
}

// RecognizeLimitAnswer reads a turn's answer as a usage limit when the agent
// reported the limit as its message instead of an error, as Copilot does
// ("Error: Failed to get response from the AI model; retried 5 times ...
// Last error: 429 Rate limit reached ..."): only an answer that is such an
// error line, never one that merely talks about limits.
func RecognizeLimitAnswer(answer string, now time.Time) (UsageLimitAnswer, bool) {
	a := strings.TrimSpace(answer)
	if !strings.HasPrefix(a, "Error:") || strings.Contains(a, "\n\n") {
		return UsageLimitAnswer{}, false
	}
	return RecognizeLimitText(a, "", now)
}

// limitWords are phrases only a usage or rate limit answer contains. It and
// the reset patterns below are compiled on first use: package-level regexps
// are compiled in every kandev command (see docs/testing.md, start-up).
var limitWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)usage limit|hit your limit|rate[ _-]?limit|resource[ _]exhausted|resource has been exhausted|exhausted your (?:capacity|daily quota|quota)|quota exceeded|exceeded your current quota|too many requests|\b429\b|usage_limit_exceeded|usagelimitexceeded|rate_limit_exceeded|ratelimitexceeded`)
})

// RecognizeLimitText is RecognizeLimit over the answer's text (message and
// data) and codex's structured error kind (codexInfo, "" when none).
func RecognizeLimitText(text, codexInfo string, now time.Time) (UsageLimitAnswer, bool) {
	switch strings.ToLower(strings.ReplaceAll(codexInfo, "_", "")) {
	case "usagelimitexceeded", "ratelimitexceeded":
	default:
		if !limitWords().MatchString(text) {
			return UsageLimitAnswer{}, false
		}
	}
	a := UsageLimitAnswer{Said: oneLine(text)}
	if t, ok := resetTime(text, now); ok {
		a.ResetAt = &t
	}
	return a, true
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "..."
	}
	return s
}

// limitPatterns are the shapes of a reset time in a limit answer.
type limitPatterns struct {
	epoch      *regexp.Regexp
	rfc3339    *regexp.Regexp
	epochField *regexp.Regexp
	seconds    *regexp.Regexp
	in         *regexp.Regexp
	inPart     *regexp.Regexp
	after      *regexp.Regexp
	tryAt      *regexp.Regexp
	clock      *regexp.Regexp
}

var resetPatterns = sync.OnceValue(func() *limitPatterns {
	return &limitPatterns{
		// Claude Code: "Claude AI usage limit reached|1753077600".
		epoch: regexp.MustCompile(`(?i)limit reached\|(\d{9,11})\b`),
		// RFC 3339 reset times in data: "resets_at":"2026-12-01T15:00:00Z".
		rfc3339: regexp.MustCompile(`(?i)reset[s_ ]*(?:at)?["': ]+(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))`),
		// Unix seconds in data: "resets_at": 1764601200.
		epochField: regexp.MustCompile(`(?i)"?reset[s_]*(?:at)?"?\s*:\s*(\d{9,11})\b`),
		// Seconds from now: "resets_in_seconds": 300, "retry-after: 30",
		// "retryDelay": "31s", "retry after 30 seconds".
		seconds: regexp.MustCompile(`(?i)(?:resets_in_seconds|retry[-_ ]?after|retrydelay)[\\"': ]+(\d+(?:\.\d+)?)\s*(?:s\b|sec|seconds?)?`),
		// "try again in 2 hours 5 minutes", "resets in 3h 10m", "in 45 seconds".
		in:     regexp.MustCompile(`(?i)(?:try again|resets?|retry)\s+in\s+((?:\d+\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,and]*)+)`),
		inPart: regexp.MustCompile(`(?i)(\d+)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`),
		// Gemini CLI: "Your quota will reset after 2h3m43s."
		after: regexp.MustCompile(`(?i)reset after\s+((?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s)?)\b`),
		// codex: "try again at 4:12 PM." (today, local) or "try again at Dec 2nd,
		// 2026 4:12 PM." (another day).
		tryAt: regexp.MustCompile(`(?i)try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d\d) ?([AP]M)`),
		// Claude Code: "resets 3pm (Europe/Berlin)", "resets 1:30am (Asia/Dhaka)".
		clock: regexp.MustCompile(`(?i)resets\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\)`),
	}
})

// resetTime is the reset time an answer states, in any of the shapes above.
func resetTime(text string, now time.Time) (time.Time, bool) {
	re := resetPatterns()
	if m := re.epoch.FindStringSubmatch(text); m != nil {
		return unixSeconds(m[1])
	}
	if m := re.rfc3339.FindStringSubmatch(text); m != nil {
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			return t.UTC(), true
		}
	}
	if m := re.epochField.FindStringSubmatch(text); m != nil {
		return unixSeconds(m[1])
	}
	if m := re.seconds.FindStringSubmatch(text); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil && f >= 0 && f < 1e8 {
			return now.Add(time.Duration(f * float64(time.Second))).UTC(), true
		}
	}
	if m := re.after.FindStringSubmatch(text); m != nil && m[1] != "" {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			return now.Add(d).UTC(), true
		}
	}
	if m := re.in.FindStringSubmatch(text); m != nil {
		var d time.Duration
		for _, p := range re.inPart.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(p[1])
			switch u := strings.ToLower(p[2]); {
			case strings.HasPrefix(u, "d"):
				d += time.Duration(n) * 24 * time.Hour
			case strings.HasPrefix(u, "h"):
				d += time.Duration(n) * time.Hour
			case strings.HasPrefix(u, "m"):
				d += time.Duration(n) * time.Minute
			default:
				d += time.Duration(n) * time.Second
			}
		}
		if d > 0 {
			return now.Add(d).UTC(), true
		}
	}
	if m := re.clock.FindStringSubmatch(text); m != nil {
		return clockReset(m, now)
	}
	if m := re.tryAt.FindStringSubmatch(text); m != nil {
		return tryAgainAt(m, now)
	}
	return time.Time{}, false
}

func unixSeconds(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0).UTC(), true
}

// clockReset is the next time the wall clock in the named zone shows the
// hour and minute (a reset never lies in the past).
func clockReset(m []string, now time.Time) (time.Time, bool) {
	loc, err := time.LoadLocation(m[4])
	if err != nil {
		return time.Time{}, false
	}
	h, _ := strconv.Atoi(m[1])
	mins, _ := strconv.Atoi(m[2])
	if h < 1 || h > 12 || mins > 59 {
		return time.Time{}, false
	}
	h %= 12
	if strings.EqualFold(m[3], "pm") {
		h += 12
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), h, mins, 0, 0, loc)
	if !t.After(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t.UTC(), true
}

// tryAgainAt is codex's "try again at" time, in this machine's zone (codex
// runs here and formats it in local time).
func tryAgainAt(m []string, now time.Time) (time.Time, bool) {
	h, _ := strconv.Atoi(m[4])
	mins, _ := strconv.Atoi(m[5])
	if h < 1 || h > 12 || mins > 59 {
		return time.Time{}, false
	}
	h %= 12
	if strings.EqualFold(m[6], "PM") {
		h += 12
	}
	local := now.Local()
	y, mon, d := local.Date()
	if m[1] != "" {
		t, err := time.Parse("Jan 2 2006", m[1]+" "+m[2]+" "+m[3])
		if err != nil {
			return time.Time{}, false
		}
		y, mon, d = t.Date()
	}
	t := time.Date(y, mon, d, h, mins, 0, 0, time.Local)
	if m[1] == "" && !t.After(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t.UTC(), true
}
