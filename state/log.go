package state

import "github.com/kandev/kandev/eventlog"

// OpenLog opens the log of session id for appending (see eventlog.Open).
func (h *Home) OpenLog(id string, opts eventlog.OpenLogOptions) (log *eventlog.EventLog, tornBytes int64, err error) {
	if err := ValidateID(id); err != nil {
		return nil, 0, err
	}
	return eventlog.Open(h.LogPath(id), id, opts)
}
