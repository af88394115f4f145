package surgery

import "github.com/kandev/kandev/state"

// NothingToCompact says why the agent's own conversation holds nothing to
// compact yet, "" when it holds the session's. After a rewind or a clear (or
// a restore that fell back to a new session) the agent's next session is a
// fresh one, and what it is to know reaches it only with the next ordinary
// prompt: a compaction before that compacts an empty conversation.
func NothingToCompact(s *state.Session) string {
	switch {
	case s.PendingContext:
		return "the agent starts a fresh session, and the conversation kept reaches it with the next prompt"
	case s.ResumeToken == "":
		return "the agent starts a fresh session, with no history, at the next prompt"
	}
	return ""
}
