package fakemodel

import (
	"flag"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Window makes the Messages fake report a subscription's usage window the
// way the Anthropic API does on an answer that still goes through: the
// anthropic-ratelimit-unified-* headers, with a 5-hour window used at Used
// (a fraction) that resets in Reset and has passed a warning threshold.
// Claude Code reads them only for a claude.ai subscriber (an OAuth token,
// not an API key) and turns them into its SDK's rate_limit_event, which
// Claude's ACP adapter sends as _claude/rateLimit on a usage_update.
// The headers go on every answer of the agent's loop in a turn whose user
// text contains Word; Claude Code reports the window when it changes.
type Window struct {
	Word  string
	Used  float64       // the window's utilization, 0 to 1
	Reset time.Duration // when the window resets, from the request
}

// flags registers -window-word, -window-used and -window-reset.
func (u *Window) flags(fs *flag.FlagSet) {
	fs.StringVar(&u.Word, "window-word", "", "messages: report a usage window in the rate-limit headers of the answers when the latest user text contains this word")
	fs.Float64Var(&u.Used, "window-used", 0.97, "the reported window's utilization, 0 to 1")
	fs.DurationVar(&u.Reset, "window-reset", 2*time.Hour, "the reported window's reset, from the request")
}

// Reports says whether the answer to the turn with this latest user text
// carries the window.
func (u *Window) Reports(user string) bool { return u.Word != "" && strings.Contains(user, u.Word) }

// Anthropic sets the unified rate-limit headers of an allowed request in a
// window past its warning threshold (status allowed_warning).
func (u *Window) Anthropic(h http.Header) {
	reset := strconv.FormatInt(time.Now().Add(u.Reset).Unix(), 10)
	used := strconv.FormatFloat(u.Used, 'f', -1, 64)
	for k, v := range map[string]string{
		"anthropic-ratelimit-unified-status":                 "allowed_warning",
		"anthropic-ratelimit-unified-reset":                  reset,
		"anthropic-ratelimit-unified-representative-claim":   "five_hour",
		"anthropic-ratelimit-unified-fallback":               "unavailable",
		"anthropic-ratelimit-unified-5h-status":              "allowed_warning",
		"anthropic-ratelimit-unified-5h-utilization":         used,
		"anthropic-ratelimit-unified-5h-reset":               reset,
		"anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9",
	} {
		h.Set(k, v)
	}
}
