package owner

import (
	"errors"
	"fmt"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
)

// CancelChild asks the owner of session id, in whatever process it runs,
// to cancel one of its agent's children (kandev cancel --child, an
// editor's session/cancel of a child session). The child must be one the
// log has, which the agent offered to cancel and which has not ended:
// otherwise the error wraps state.ErrNotFound (no such child) or
// subagents.ErrNoChildCancel. asked is false when no owner runs: then the
// child's agent is not running either, and there is nothing to cancel.
func CancelChild(h *state.Home, id, child, from string) (asked bool, err error) {
	kids, err := subagents.FromLog(h.LogPath(id))
	if err != nil {
		return false, err
	}
	if _, err := subagents.Cancellable(kids, child); errors.Is(err, subagents.ErrNoChild) {
		return false, fmt.Errorf("session %s has no child %s (kandev status %s lists its children): %w", id, child, id, state.ErrNotFound)
	} else if err != nil {
		return false, fmt.Errorf("%w (kandev status %s shows its children)", err, id)
	}
	d, err := dialControl(Job{Home: h, SessionID: id}, Request{Follows: FollowsControl, Control: &state.Input{Kind: state.InputCancel, Child: child, From: from}})
	if err != nil {
		return false, err
	}
	return d.Queued, nil
}
