package e2e_test

// Claude's own usage window, driven offline through the real adapter: the
// fake Messages server reports a 5-hour window in the anthropic-ratelimit-
// unified-* headers (-window-word), Claude Code turns them into its SDK's
// rate_limit_event, and the adapter sends that as _claude/rateLimit on a
// usage_update. Claude Code reads those headers for a claude.ai subscriber
// only (an OAuth token, not an API key), so the rig signs in with a fake
// CLAUDE_CODE_OAUTH_TOKEN.

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/verdict"
)

const claudeWindowWord = "NEARLIMIT"

// asSubscriber signs Claude Code in as a claude.ai subscriber (a fake OAuth
// token) instead of with an API key: it reads the unified rate-limit
// headers for subscribers alone.
func (r *claudeRig) asSubscriber() {
	delete(r.agentEnv, "ANTHROPIC_API_KEY")
	r.setAgentEnv("CLAUDE_CODE_OAUTH_TOKEN", "offline-fake-oauth-token")
}

func TestLimit_ClaudesRateLimitHeadersShowTheWindowAndHoldUnattendedWork(t *testing.T) {
	t.Parallel()
	r := newClaudeRig(t, "-tool-word", claudeToolWord, "-tool-command", "echo working",
		"-window-word", claudeWindowWord, "-window-used", "0.97", "-window-reset", "2h")
	r.asSubscriber()
	before := time.Now()
	id := r.startWarm("60s", "--agent", "claude", "--permissions", "approve-all", "please "+claudeToolWord+" "+claudeWindowWord)
	evs := r.events(id)
	for _, e := range evs {
		if e.Type == eventlog.EventLimit || e.Type == eventlog.EventUsage {
			t.Logf("%s %s %s", e.Type, e.Summary, e.Data)
		}
	}
	_ = before
	_ = verdict.BadgeWaitingForLimit
	_ = strings.Contains
}
