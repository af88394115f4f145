package owner

import (
	"github.com/kandev/kandev/notify"
	"github.com/kandev/kandev/state"
)

// notifyFor tells a person about the events just written that need one
// (notify.For); the hook starts detached, so this never waits on it.
func (o *owner) notifyFor(evs []*state.Event) {
	if o.job.Notify == nil {
		return
	}
	for _, e := range evs {
		if n, ok := notify.For(*e, o.job.Detached); ok {
			n.Session = o.job.SessionID
			o.job.Notify(n)
		}
	}
}
