package owner

import (
	"fmt"

	"github.com/kandev/kandev/state"
)

// cancelNote is the marker a cancelled turn gets: it names who cancelled
// it, so the log tells an editor's cancel from a shell's.
func cancelNote(in state.Input) string {
	if in.From == state.FromFollower {
		return "The turn was cancelled with Ctrl-C in the command that sent it."
	}
	if in.From == state.FromEditor {
		return "The turn was cancelled from the editor (ACP session/cancel through kandev acp)."
	}
	return "The turn was cancelled with kandev cancel."
}

// personCancelled is the error of a command whose own turn a person
// cancelled (Ctrl-C, kandev cancel, stop, close --now): exit 130, the same
// whether the turn ran in this command or in an owner it follows.
func personCancelled(id, stop string) error {
	return fmt.Errorf("%w: the turn was cancelled (%s); kandev prompt %s \"...\" sends the next message", ErrInterrupted, stop, id)
}

// noteOwnCancel, after the turn of this command's own prompt, keeps the
// error its command exits with when a person ended that turn from another
// process. A detached owner's caller decides that as it follows.
func (o *owner) noteOwnCancel() {
	if o.personEnded && !o.job.Detached {
		o.ownCancelled = personCancelled(o.s.ID, o.res.StopReason)
	}
}
