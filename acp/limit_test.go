package acp

import (
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// The answers below are the shapes the real agents send when a usage or
// rate limit stops a turn, as their adapters build them (claude-code-acp
// throws RequestError.internalError(undefined, result) with the SDK's
// result text; codex-acp sends Error::internal_error().data({message,
// codex_error_info})), and the provider bodies the CLIs pass on.
func TestRecognizeLimit_TheRealAgentsAnswers(t *testing.T) {
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	epoch := time.Unix(1764601200, 0).UTC()
	berlin3pm := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC) // 15:00 in Berlin (UTC+1) is 14:00 UTC: now, so tomorrow
	berlin3pm = berlin3pm.AddDate(0, 0, 1)
	cases := []struct {
		name  string
		err   error
		limit bool
		reset *time.Time
	}{
		{"claude-code-acp: usage limit with unix reset",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: "Claude AI usage limit reached|1764601200"}, true, &epoch},
		{"claude-code-acp: you've hit your limit, resets at a wall clock time",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: "You've hit your limit · resets 3pm (Europe/Berlin)"}, true, &berlin3pm},
		{"claude-code-acp: API 429 rate_limit_error",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011CaYFzoBjAUaBYZZjpJHee"}`}, true, nil},
		{"codex-acp: usage_limit_exceeded with try again in",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or try again in 2 hours 5 minutes.", "codex_error_info": "usage_limit_exceeded"}}, true, at(2*time.Hour + 5*time.Minute)},
		{"codex-acp 0.16: usage_limit_exceeded, try again at a local clock time (as the real one said)",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at " + now.Add(2*time.Hour).Local().Format("3:04 PM") + ".", "codex_error_info": "usage_limit_exceeded"}}, true, at(2 * time.Hour)},
		{"codex-acp: try again on another day",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "You've hit your usage limit. Try again at " + now.Add(49*time.Hour).Local().Format("Jan 2") + "nd, " + now.Add(49*time.Hour).Local().Format("2006 3:04 PM") + ".", "codex_error_info": "usage_limit_exceeded"}}, true, at(49 * time.Hour)},
		{"claude-agent-acp 0.23 over the API's 429 (as the real one said)",
			&sdk.RequestError{Code: -32603, Message: "Internal error: API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later."}, true, nil},
		{"claude-code-acp: the usage limit text in the message, as the TS SDK puts it",
			&sdk.RequestError{Code: -32603, Message: "Internal error: Claude AI usage limit reached|1764601200"}, true, &epoch},
		{"codex-acp: usage_limit_exceeded without a time",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "The usage limit has been reached", "codex_error_info": "usage_limit_exceeded"}}, true, nil},
		{"codex-acp: another codex error is no limit",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "stream disconnected before completion", "codex_error_info": "response_stream_disconnected"}}, false, nil},
		{"gemini-cli 0.61: code 429, daily quota (as the real one said)",
			&sdk.RequestError{Code: 429, Message: "You have exhausted your daily quota on this model."}, true, nil},
		{"gemini-cli: 429 RESOURCE_EXHAUSTED with RetryInfo",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": `[API Error: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31s"}]}}]`}}, true, at(31 * time.Second)},
		{"gemini-cli: resource has been exhausted, no time",
			errors.New(`[API Error: {"error":{"message":"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n","code":429,"status":"Too Many Requests"}}]`), true, nil},
		{"gemini-cli: terminal quota with reset after",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "You have exhausted your capacity on this model. Your quota will reset after 2h3m43s."}}, true, at(2*time.Hour + 3*time.Minute + 43*time.Second)},
		{"copilot: 429 rate limit with retry-after",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "Request failed due to rate limiting (429). Retry after 60 seconds."}}, true, at(time.Minute)},
		{"opencode: provider rate limit error",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "AI_APICallError: Rate limit reached for requests", "resets_at": "2026-12-01T14:30:00Z"}}, true, at(30 * time.Minute)},
		{"an ordinary internal error",
			&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "file not found"}}, false, nil},
		{"authentication required is no limit",
			&sdk.RequestError{Code: -32000, Message: "Authentication required"}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, ok := RecognizeLimit(c.err, now)
			if ok != c.limit {
				t.Fatalf("limit = %v, want %v (%+v)", ok, c.limit, a)
			}
			switch {
			case c.reset == nil && a.ResetAt != nil:
				t.Fatalf("reset %v, want none", a.ResetAt)
			case c.reset != nil && (a.ResetAt == nil || !a.ResetAt.Equal(*c.reset)):
				t.Fatalf("reset %v, want %v", a.ResetAt, c.reset)
			}
			if ok && a.Said == "" {
				t.Fatal("no words kept")
			}
		})
	}
}

func TestRecognizeLimitAnswer_OnlyAnErrorLineThatIsALimit(t *testing.T) {
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	cases := []struct {
		answer string
		limit  bool
	}{
		// Copilot 1.0.102 against a 429 (as the real one said).
		{"Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 5.56 seconds) Last error: 429 Rate limit reached for requests. Please try again in 1s.\n", true},
		{"Error: Failed to get response from the AI model; retried 5 times Last error: 500 Internal Server Error", false},
		{"The API returns 429 when the rate limit is reached; add a retry.", false},
		{"Error: rate limit reached\n\nHere is how to fix your code: ...", false},
		{"", false},
	}
	for _, c := range cases {
		a, ok := RecognizeLimitAnswer(c.answer, now)
		if ok != c.limit {
			t.Errorf("%q: limit %v, want %v", c.answer, ok, c.limit)
		}
		if strings.Contains(c.answer, "try again in 1s") && (a.ResetAt == nil || !a.ResetAt.Equal(now.Add(time.Second))) {
			t.Errorf("%q: reset %v", c.answer, a.ResetAt)
		}
	}
}
