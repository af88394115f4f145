package acp

import (
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// ResumeContextFor is the first prompt of a fresh agent session for s:
// request wrapped in the resume context of the conversation's current
// epoch, or request alone when that conversation is empty (after a clear,
// or a rewind to its start). A follow-up session (start --parent) reads its
// parent's log first; a fork has its own copy of the parent's conversation.
func ResumeContextFor(h *state.Home, s *state.Session, request string, maxBytes int) string {
	var evs []state.Event
	partial := false
	if s.ParentID != "" && s.ForkedAt == 0 {
		evs, partial = historyForContext(h.LogPath(s.ParentID), maxBytes)
	}
	own, ownPartial := historyForContext(h.LogPath(s.ID), maxBytes)
	evs = append(evs, own...)
	if !hasConversation(evs) && !partial && !ownPartial {
		return request
	}
	return history.BuildResumeContextWindow(evs, request, s.ID, maxBytes, partial || ownPartial)
}

// hasConversation reports whether evs hold a message or a tool call.
func hasConversation(evs []state.Event) bool {
	for _, e := range evs {
		switch e.Type {
		case state.EventUserMessage, state.EventAgentMessage, state.EventToolCall, state.EventToolResult:
			return true
		}
	}
	return false
}
