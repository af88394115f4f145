package owner

import (
	"testing"

	"github.com/kandev/kandev/state"
)

func TestCancelNote_SaysWhoCancelled(t *testing.T) {
	cases := []struct {
		in   state.Input
		want string
	}{
		{state.Input{Kind: state.InputCancel}, "The turn was cancelled with kandev cancel."},
		{state.Input{Kind: state.InputCancel, From: state.FromEditor}, "The turn was cancelled from the editor (ACP session/cancel through kandev acp)."},
	}
	for _, c := range cases {
		if got := cancelNote(c.in); got != c.want {
			t.Errorf("cancelNote(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}
