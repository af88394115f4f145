package editor

import (
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/state"
)

// An editor that declared subagents is shown each child as a session of
// its own (children.go); its session/cancel of such a session cancels
// that child, as kandev cancel ID --child CID does, where the agent offers
// it. session/cancel is a notification: what cannot be done is said on
// kandev acp's log, the editor gets no answer.

// noteChild remembers that child, a child session shown to the editor,
// belongs to the session parent.
func (srv *server) noteChild(child, parent string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.children == nil {
		srv.children = map[string]string{}
	}
	srv.children[child] = parent
}

// cancelChild asks the owner of parent to cancel child.
func (srv *server) cancelChild(parent, child string) {
	asked, err := owner.CancelChild(srv.opts.Home, parent, child, state.FromEditor)
	switch {
	case err != nil:
		srv.logf("session/cancel of child %s ignored: %v", child, err)
	case !asked:
		srv.logf("session/cancel of child %s: no kandev process runs session %s, so the child is not running either", child, parent)
	}
}
