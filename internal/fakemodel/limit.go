package fakemodel

import (
	"encoding/json"
	"flag"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limit makes the fake model refuse a request over a usage or rate
// limit the way its vendor's API does (status 429, the vendor's error body
// and headers), for turns whose latest user text contains Word.
type Limit struct {
	Word  string
	Reset time.Duration // when the limit resets, from the request
}

// flags registers -limit-word and -limit-reset.
func (l *Limit) flags(fs *flag.FlagSet) {
	fs.StringVar(&l.Word, "limit-word", "", "answer 429, the vendor's usage/rate limit answer, when the latest user text contains this word")
	fs.DurationVar(&l.Reset, "limit-reset", 30*time.Second, "the limit's reset, from the request, in that answer")
}

// Hit reports whether the turn with this latest user text is refused.
func (l *Limit) Hit(user string) bool { return l.Word != "" && strings.Contains(user, l.Word) }

func (l *Limit) resetAt() time.Time { return time.Now().Add(l.Reset).Truncate(time.Second) }

func write429(w http.ResponseWriter, headers map[string]string, body any) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(body)
}

// Anthropic answers as the Messages API does when a subscription's usage
// limit is reached: 429 rate_limit_error, with the unified rate-limit
// headers Claude Code reads the reset time from (for a subscription login;
// the representative claim names the 5-hour window, without which it calls
// the answer "not your usage limit"), retry-after, and x-should-retry:
// false (the SDK then does not retry).
func (l *Limit) Anthropic(w http.ResponseWriter) {
	at := l.resetAt()
	write429(w, map[string]string{
		"retry-after":                                      strconv.Itoa(int(time.Until(at).Seconds() + 0.5)),
		"anthropic-ratelimit-unified-status":               "rejected",
		"anthropic-ratelimit-unified-reset":                strconv.FormatInt(at.Unix(), 10),
		"anthropic-ratelimit-requests-reset":               at.UTC().Format(time.RFC3339),
		"anthropic-ratelimit-unified-5h-status":            "rejected",
		"anthropic-ratelimit-unified-5h-reset":             strconv.FormatInt(at.Unix(), 10),
		"anthropic-ratelimit-unified-5h-utilization":       "1",
		"anthropic-ratelimit-unified-representative-claim": "five_hour",
		"x-should-retry":                                   "false",
		"request-id":                                       "req_fake_limit",
	}, map[string]any{"type": "error", "error": map[string]any{
		"type": "rate_limit_error", "message": "This request would exceed your account's rate limit. Please try again later.",
	}, "request_id": "req_fake_limit"})
}

// OpenAIUsageLimit answers as the ChatGPT backend of the Responses API does
// when a plan's usage limit is reached: 429 usage_limit_reached with
// resets_at (unix seconds) and resets_in_seconds, which codex turns into
// its UsageLimitReached error.
func (l *Limit) OpenAIUsageLimit(w http.ResponseWriter) {
	at := l.resetAt()
	write429(w, map[string]string{"retry-after": strconv.Itoa(int(l.Reset.Seconds()))}, map[string]any{"error": map[string]any{
		"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
		"resets_at": at.Unix(), "resets_in_seconds": int(l.Reset.Seconds()),
	}})
}

// OpenAIRateLimit answers as the OpenAI API (Chat Completions) does over a
// rate limit: 429 rate_limit_exceeded with the x-ratelimit reset headers.
func (l *Limit) OpenAIRateLimit(w http.ResponseWriter) {
	secs := strconv.Itoa(int(l.Reset.Seconds()))
	write429(w, map[string]string{
		"retry-after": secs, "x-ratelimit-reset-requests": secs + "s", "x-ratelimit-remaining-requests": "0",
	}, map[string]any{"error": map[string]any{
		"message": "Rate limit reached for requests. Please try again in " + secs + "s.", "type": "requests",
		"param": nil, "code": "rate_limit_exceeded",
	}})
}

// Gemini answers as the Gemini API does over a quota: 429
// RESOURCE_EXHAUSTED with a google.rpc.RetryInfo retryDelay.
func (l *Limit) Gemini(w http.ResponseWriter) {
	write429(w, nil, map[string]any{"error": map[string]any{
		"code": 429, "status": "RESOURCE_EXHAUSTED",
		"message": "You exceeded your current quota, please check your plan and billing details.",
		"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(int(l.Reset.Seconds())) + "s"},
		},
	}})
}
