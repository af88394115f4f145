package owner

import (
	"errors"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/notify"
)

// notifyFor tells a person about the events just written that need one
// (notify.For); the hook starts detached, so this never waits on it.
func (o *owner) notifyFor(evs []*eventlog.Event) {
	if o.job.Notify == nil {
		return
	}
	for _, e := range evs {
		if n, ok := notify.For(*e, o.job.Detached); ok {
			n.Session = o.job.SessionID
			o.job.Notify(n, o.hookFailed)
		}
	}
}

// hookFailed logs a failed [notify] command as a warning marker, once per
// kind of failure (exit status, timeout, could not start) in this owner's
// life: a hook that fails on every note must not fill the log. It runs on
// the hook's goroutine, possibly after the owner stopped writing.
func (o *owner) hookFailed(err error) {
	kind := notify.FailExit
	var f *notify.Failure
	if errors.As(err, &f) {
		kind = f.Kind
	}
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	if o.logClosed || o.hookFailures[kind] {
		return
	}
	if o.hookFailures == nil {
		o.hookFailures = map[string]bool{}
	}
	o.hookFailures[kind] = true
	m := history.NewMarker(history.MarkerNotifyFailed, err.Error()+"; a person may not have been told; fix the [notify] command in the config (later failures of this kind are not logged again until the owner restarts).", "")
	o.write(true, &m)
}
