package state

import "time"

// RateWindow is the agent's own account of its usage window, as it last
// reported it (a limit event): which window, how much of it is used and
// when it resets. It is kept on the record so that status, usage and the
// pause_at_percent rule read it without reading the log.
type RateWindow struct {
	// Window names the limit ("five_hour", "seven_day", ...; "" when the
	// agent did not say).
	Window string `json:"window,omitempty"`
	// Status is the agent's word for it: "allowed", "allowed_warning",
	// "rejected".
	Status string `json:"status,omitempty"`
	// UsedPercent is how much of the window is used, 0 to 100 (nil: not
	// said).
	UsedPercent *float64 `json:"used_percent,omitempty"`
	// ResetsAt is when the window resets (nil: not said, or not believable).
	ResetsAt *time.Time `json:"resets_at,omitempty"`
	// Source is the agent that reported it ("claude", ...).
	Source string `json:"source,omitempty"`
	// ReportedAt is when kandev read it.
	ReportedAt time.Time `json:"reported_at"`
	// Problem says what in the report made no sense and was clamped or
	// ignored ("" when nothing).
	Problem string `json:"problem,omitempty"`
}

// AfterReset is what unattended continuation has done since the usage
// window last reset, for the after_reset_turns and after_reset_usd bounds.
type AfterReset struct {
	// Since is the reset the count starts from.
	Since time.Time `json:"since"`
	// Turns are the unattended turns started since.
	Turns int `json:"turns"`
	// CostAtReset is the session's total cost when the count started.
	CostAtReset float64 `json:"cost_at_reset"`
	// Exhausted says why unattended continuation now waits for a person
	// ("" while the bounds allow more).
	Exhausted string `json:"exhausted,omitempty"`
}

// WakeReport is what one unattended wake (kandev recover) did.
type WakeReport struct {
	At      time.Time `json:"at"`
	Turns   int       `json:"turns"`
	Spent   float64   `json:"spent"`
	Summary string    `json:"summary"`
}

// PauseAfterReset: unattended continuation after a reset spent its
// after_reset_turns or after_reset_usd.
const PauseAfterReset = "after_reset_budget"
