package owner

import (
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/remote"
)

// takenOver ends a turn whose claim another machine took over while it ran
// (this owner stalled past the claim's expiry): the agent was told to stop,
// and the turn ends as taken over, not as a person's Ctrl-C. This copy is
// not pushed; the error (exit 3) says how to keep it or take the other.
func (o *owner) takenOver(fenced error) (string, error) {
	o.marker(history.MarkerTakenOver, "Another machine took this session over during the turn (this machine's claim had expired): the turn stops here and this copy is not pushed. "+fenced.Error()+".", "")
	return eventlog.StopTakenOver, fenced
}

// takenOverError is what a command that followed a turn taken over says:
// the owner's own words, recorded with the turn's end.
type takenOverError struct{ msg string }

func (e *takenOverError) Error() string { return e.msg }

// Is makes errors.Is(err, remote.ErrFenced) true (exit 3).
func (e *takenOverError) Is(target error) bool { return target == remote.ErrFenced }

// followedTakenOver is the error of a followed turn that ended taken over.
func followedTakenOver(id, cause string) error {
	if cause == "" {
		cause = "session " + id + " was taken over by another machine: this machine's copy is not pushed; kandev pull " + id + " takes the newer one, kandev fork " + id + " keeps this one as a new session"
	}
	return &takenOverError{msg: cause}
}
