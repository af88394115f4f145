package surgery

import (
	"testing"

	"github.com/kandev/kandev/state"
)

func TestNothingToCompact_UntilTheAgentHoldsTheConversation(t *testing.T) {
	cases := []struct {
		name    string
		s       state.Session
		nothing bool
	}{
		{"after a rewind: a fresh agent session, the kept history pending", state.Session{PendingContext: true}, true},
		{"a warm agent started after a rewind, before the prompt that carries the history", state.Session{ResumeToken: "tok", PendingContext: true}, true},
		{"after a clear: a fresh agent session, nothing pending", state.Session{Epoch: 1}, true},
		{"an agent session that holds the conversation", state.Session{ResumeToken: "tok", Epoch: 1}, false},
	}
	for _, c := range cases {
		if got := NothingToCompact(&c.s) != ""; got != c.nothing {
			t.Errorf("%s: nothing to compact = %v, want %v", c.name, got, c.nothing)
		}
	}
}
