package subagents

import (
	"errors"
	"fmt"
)

// ErrNoChild: the session has no child of that id.
var ErrNoChild = errors.New("no such child")

// ErrNoChildCancel: the agent does not offer to cancel that child, or it
// already ended.
var ErrNoChildCancel = errors.New("the child cannot be cancelled")

// Cancellable is child id of children, when a client may cancel it now:
// the agent offered it (can_cancel) and it has not ended.
func Cancellable(children []Child, id string) (Child, error) {
	for _, c := range children {
		if c.ID != id {
			continue
		}
		switch {
		case !c.CanCancel:
			return c, fmt.Errorf("%w: the agent does not offer to cancel child %s", ErrNoChildCancel, id)
		case c.State != Running:
			return c, fmt.Errorf("%w: child %s is %s already", ErrNoChildCancel, id, c.State)
		}
		return c, nil
	}
	return Child{}, fmt.Errorf("%w: %s", ErrNoChild, id)
}
