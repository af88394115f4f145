package owner

import "testing"

func TestNextServeRound_StartsOverOnlyForInputsLeftAfterARunThatServedSome(t *testing.T) {
	left := serveRound{Detached: true, Pending: true, Served: true}
	cases := []struct {
		name string
		f    serveRound
		want bool
	}{
		{"the agent died with inputs still queued after serving some: start over", left, true},
		{"nothing left queued: done", serveRound{Detached: true, Served: true}, false},
		{"an owner with a caller (the editor's) leaves what remains to it", serveRound{Pending: true, Served: true}, false},
		{"inputs queued but none served: a new run would not serve them either", serveRound{Detached: true, Pending: true}, false},
		{"a signal ends the owner", serveRound{Detached: true, Pending: true, Served: true, Stopped: true}, false},
		{"another owner holds the session, or it is not resumable, or not writable", serveRound{Detached: true, Pending: true, Served: true, Final: true}, false},
		{"a record that cannot be read decides nothing", serveRound{Detached: true, Pending: true, Served: true, Unknown: true}, false},
		{"the last allowed round starts over", serveRound{Detached: true, Round: serveRounds - 1, Pending: true, Served: true}, true},
		{"no more than serveRounds rounds", serveRound{Detached: true, Round: serveRounds, Pending: true, Served: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := nextServeRound(c.f); got != c.want {
				t.Errorf("nextServeRound(%+v) = %v, want %v", c.f, got, c.want)
			}
		})
	}
}
