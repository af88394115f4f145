package state

import "time"

// StopRateLimited ends a turn the agent refused because its usage or rate
// limit was reached.
const StopRateLimited = "rate_limited"

// UsageLimit is the agent's usage limit that ended the session's last turn,
// kept on the record until the next turn starts.
type UsageLimit struct {
	ReachedAt time.Time `json:"reached_at"`
	// ResetAt is when the agent said the limit resets (nil: it did not say).
	ResetAt *time.Time `json:"reset_at,omitempty"`
	// Said is the agent's own words about it (redacted, one line).
	Said string `json:"said,omitempty"`
	// Turn is the turn the limit ended.
	Turn string `json:"turn_id,omitempty"`
	// Scheduled is the kandev recover the operating system was asked to run
	// at the reset time (nil when none).
	Scheduled *ScheduledRecover `json:"scheduled,omitempty"`
	// Held: no turn hit the limit; kandev held unattended work back
	// before it (pause_at_percent), so nothing was cut off.
	Held bool `json:"held,omitempty"`
}

// ScheduledRecover is one kandev recover handed to the operating system's
// scheduler: enough to show it and to cancel it.
type ScheduledRecover struct {
	At time.Time `json:"at"`
	// Via is the scheduler: "systemd-run", "launchd" or "at".
	Via string `json:"via"`
	// Handle names the job for that scheduler: a systemd unit, a launchd
	// label, an at job number.
	Handle string `json:"handle"`
	// Name is the job's own name (schedule.Job.Name), by which a scheduler
	// can be searched for it.
	Name string `json:"name,omitempty"`
	// Pending: the scheduler was being asked and its answer is not recorded
	// (a process killed meanwhile); Via and Handle are unknown until
	// schedule.Settle finds the job, or finds there is none.
	Pending bool `json:"pending,omitempty"`
}
