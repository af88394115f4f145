package owner

import (
	"testing"

	"github.com/kandev/kandev/state"
)

func TestNextSteer(t *testing.T) {
	steer := func(id string) state.Input { return state.Input{ID: id, Kind: state.InputPrompt, Steer: true} }
	prompt := state.Input{ID: "p", Kind: state.InputPrompt}
	approve := state.Input{ID: "a", Kind: state.InputApprove}
	cancel := state.Input{ID: "c", Kind: state.InputCancel, ForInput: "other"}
	cases := []struct {
		name     string
		ins      []state.Input
		answered map[string]bool
		tried    map[string]bool
		want     string
	}{
		{"a steer first in the inbox joins the turn", []state.Input{steer("s")}, nil, nil, "s"},
		{"an empty inbox steers nothing", nil, nil, nil, ""},
		{"a plain prompt is never steered", []state.Input{prompt}, nil, nil, ""},
		{"a steer behind a queued prompt waits for its turn", []state.Input{prompt, steer("s")}, nil, nil, ""},
		{"an answer already taken does not hold a steer back", []state.Input{approve, steer("s")}, map[string]bool{"a": true}, nil, "s"},
		{"an answer not taken yet holds it back", []state.Input{approve, steer("s")}, nil, nil, ""},
		{"a control for another turn holds it back", []state.Input{cancel, steer("s")}, nil, nil, ""},
		{"one whose sender pressed Ctrl-C while it waited is not steered", []state.Input{steer("s"), {ID: "x", Kind: state.InputCancel, ForInput: "s"}}, nil, nil, ""},
		{"one the agent handed back waits for its own turn", []state.Input{steer("s"), steer("s2")}, nil, map[string]bool{"s": true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, ok := NextSteer(c.ins, c.answered, c.tried)
			if got := in.ID; got != c.want || ok != (c.want != "") {
				t.Fatalf("NextSteer = %q, %v; want %q", got, ok, c.want)
			}
		})
	}
}
