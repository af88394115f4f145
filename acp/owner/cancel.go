package owner

import "github.com/kandev/kandev/state"

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
