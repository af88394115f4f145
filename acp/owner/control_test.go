package owner

import (
	"testing"

	"github.com/kandev/kandev/state"
)

func TestControlApplies_OnlyToTheTurnItNames(t *testing.T) {
	for _, c := range []struct {
		name        string
		in          state.Input
		input, turn string
		followsUp   string
		want        bool
	}{
		{"a kandev cancel names nothing: the running turn", state.Input{Kind: state.InputCancel}, "in-1", "t3", "", true},
		{"a follower's cancel of the input this turn serves", state.Input{Kind: state.InputCancel, ForInput: "in-1"}, "in-1", "t3", "", true},
		{"a follower's cancel of a prompt queued behind this turn waits", state.Input{Kind: state.InputCancel, ForInput: "in-2"}, "in-1", "t3", "", false},
		{"a cancel of an input never reaches the initial turn", state.Input{Kind: state.InputCancel, ForInput: "in-2"}, "", "t1", "", false},
		{"a follower's cancel of this very turn", state.Input{Kind: state.InputCancel, ForTurn: "t3"}, "", "t3", "", true},
		{"a cancel of a turn already over leaves the next one alone", state.Input{Kind: state.InputCancel, ForTurn: "t2"}, "", "t3", "", false},
		{"both named and both match", state.Input{Kind: state.InputCancel, ForInput: "in-1", ForTurn: "t3"}, "in-1", "t3", "", true},
		{"a resume's cancel of the follow-up of t2 cancels that follow-up", state.Input{Kind: state.InputCancel, ForFollowUpOf: "t2"}, "", "t3", "t2", true},
		{"a resume's cancel of a follow-up leaves a queued prompt's turn alone", state.Input{Kind: state.InputCancel, ForFollowUpOf: "t2"}, "in-1", "t3", "", false},
		{"a cancel of the follow-up of another turn waits", state.Input{Kind: state.InputCancel, ForFollowUpOf: "t1"}, "", "t3", "t2", false},
	} {
		if got := ControlApplies(c.in, c.input, c.turn, c.followsUp); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
