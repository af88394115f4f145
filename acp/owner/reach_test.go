package owner

import (
	"testing"
	"time"
)

func TestDecideReach_OneDecisionForWhereTheOwnerRuns(t *testing.T) {
	linger := 5 * time.Minute
	cases := []struct {
		name string
		f    ReachFacts
		want Reach
	}{
		{"no linger (CI, --linger 0) runs the owner in the command", ReachFacts{}, ReachHere},
		{"a lingering session starts a detached owner and follows it", ReachFacts{Linger: linger}, ReachDetached},
		{"defer starts a detached owner even without linger: a parked turn outlives the command", ReachFacts{Defers: true}, ReachDetached},
		{"resume -i owns the session here: the terminal is this process's", ReachFacts{Linger: linger, Interactive: true}, ReachHere},
		{"a live warm owner is joined: the prompt queues and is followed", ReachFacts{Linger: linger, OwnerAlive: true}, ReachJoin},
		{"a live owner is joined also without linger", ReachFacts{OwnerAlive: true}, ReachJoin},
		{"a busy live owner is joined (queued behind its turn)", ReachFacts{OwnerAlive: true, Follows: FollowsInput}, ReachJoin},
		{"Ctrl-C or SIGTERM while following hands the turn back to its owner", ReachFacts{Linger: linger, OwnerAlive: true, Interrupted: true}, ReachLeave},
		{"an interrupt wins over an early exit", ReachFacts{Interrupted: true, Early: &EarlyExit{}}, ReachLeave},
		{"a detached owner that died before writing anything is run here, where its error shows", ReachFacts{Linger: linger, Early: &EarlyExit{}}, ReachHere},
		{"a detached owner that died after a failure on record fails a start with that failure", ReachFacts{Linger: linger, Follows: FollowsFirstTurn, Early: &EarlyExit{Failure: "agent exited"}}, ReachFailed},
		{"a detached owner that died mid-first-turn with no failure on record is run here", ReachFacts{Linger: linger, Follows: FollowsFirstTurn, Early: &EarlyExit{}}, ReachHere},
		{"a prompt's detached owner that died after a failure is run here: the retry shows the cause", ReachFacts{Linger: linger, Follows: FollowsInput, Early: &EarlyExit{Failure: "agent exited"}}, ReachHere},
		{"a resume whose detached owner restored, served and exited is done", ReachFacts{Linger: linger, Follows: FollowsRestore, Early: &EarlyExit{Restored: true}}, ReachDone},
		{"a resume whose detached owner died before restoring is run here", ReachFacts{Linger: linger, Follows: FollowsRestore, Early: &EarlyExit{Failure: "launch failed"}}, ReachHere},
		{"an early exit is decided before the lock probe: the owner that took over is joined by running here (busy)", ReachFacts{OwnerAlive: true, Early: &EarlyExit{}}, ReachHere},
		{"a prompt queued behind inputs nobody serves, with no live owner and no linger, serves them here", ReachFacts{Follows: FollowsInput}, ReachHere},
		{"a queued input with no live owner on a lingering session is served by a detached owner", ReachFacts{Linger: linger, Follows: FollowsInput}, ReachDetached},
		{"the detached owner (__serve) and the editor's local owner are the owner, here", ReachFacts{Linger: linger, Follows: FollowsServe}, ReachHere},
		{"an owner here that finds the lock held is still here: its run reports the owner busy", ReachFacts{OwnerAlive: true, Follows: FollowsServe}, ReachHere},
		{"inputs queued with nobody to follow them and no live owner get a detached owner, even without linger", ReachFacts{Follows: FollowsQueue}, ReachDetached},
		{"inputs queued for a live owner are its to serve: nothing to start", ReachFacts{OwnerAlive: true, Follows: FollowsQueue}, ReachJoin},
		{"an answer to a parked request goes to the live owner that holds it", ReachFacts{OwnerAlive: true, Follows: FollowsAnswer}, ReachJoin},
		{"an answer with no live owner applies to nothing: the command fails", ReachFacts{Linger: linger, Follows: FollowsAnswer}, ReachFailed},
		{"a control request goes to the live owner", ReachFacts{OwnerAlive: true, Follows: FollowsControl}, ReachJoin},
		{"a control request with no live owner is sent nowhere, whatever the linger", ReachFacts{Linger: linger, Defers: true, Follows: FollowsControl}, ReachFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DecideReach(c.f); got != c.want {
				t.Errorf("DecideReach(%+v) = %s, want %s", c.f, got, c.want)
			}
		})
	}
}
