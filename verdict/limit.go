package verdict

import (
	"time"

	"github.com/kandev/kandev/state"
)

// BadgeWaitingForLimit: the last turn hit the agent's usage limit and
// nothing has run since.
const BadgeWaitingForLimit = "waiting-for-limit"

// LimitLifted reports whether the limit's reset time has passed.
func LimitLifted(l *state.UsageLimit, now time.Time) bool {
	return l != nil && l.ResetAt != nil && !now.Before(*l.ResetAt)
}

// ResumeAfterLimit decides whether kandev continues a session by itself
// once its usage limit resets: when asked to (resume_after_limit), when the
// agent said when, and while fewer than maxInRow such continuations ran in
// a row (attempts) without a turn that ended otherwise.
func ResumeAfterLimit(enabled bool, l *state.UsageLimit, attempts, maxInRow int) bool {
	return enabled && l != nil && l.ResetAt != nil && attempts < maxInRow
}
