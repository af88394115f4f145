package state

// Pause kinds: why an interrupted turn waits for an operator instead of
// getting its one automatic continuation.
const (
	PauseWorktree              = "worktree"
	PausePermissionPending     = "permission_pending"
	PauseAgentChanged          = "agent_changed"
	PausePermissionModeChanged = "permission_mode_changed"
	PauseStopped               = "stopped"
	PauseBudget                = "budget"
	// PauseMaintenance: the interrupted turn was a maintenance turn (a
	// compaction); sending "continue" to it would make no sense.
	PauseMaintenance = "maintenance"
	// PauseCost: the session has spent its [session] max_cost.
	PauseCost = "cost"
	// PausePulledCwd: a pull brought a working directory outside any clone
	// it maps to here (Session.PulledCwd); no agent runs there.
	PausePulledCwd = "pulled_cwd"
)

// Pause is why automatic continuation of an interrupted turn waits for an
// operator. It is data, so it can be re-checked: when its cause is gone the
// pause clears itself.
type Pause struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	Turn   string `json:"turn"` // the interrupted turn it holds back
}

// Interruption is a turn cut off before its end by its owner's death,
// repaired in the log and waiting for its one automatic continuation.
type Interruption struct {
	Turn string `json:"turn"`
	// PermissionOpen is set when a permission request had no answer when
	// the turn was cut off.
	PermissionOpen bool `json:"permission_open,omitempty"`
	// Maintenance is set when the turn was a maintenance turn.
	Maintenance bool `json:"maintenance,omitempty"`
}

// AwaitingContinuation is the interrupted turn still owed its continuation,
// "" when none: repaired turns kept in Interrupted, and a turn the record
// says is running (its owner gone, not yet repaired). While the record
// keeps the initial prompt (not yet sent), nothing is continued: the prompt
// is sent instead.
func (s *Session) AwaitingContinuation() (turn string, permissionOpen bool) {
	switch {
	case s.InitialPrompt != "":
		return "", false
	case s.Interrupted != nil && s.Interrupted.Turn != s.ContinuedTurn:
		return s.Interrupted.Turn, s.Interrupted.PermissionOpen
	case s.CurrentTurn != "" && s.CurrentTurn != s.ContinuedTurn && (s.State == StateRunning || s.State == StateStarting):
		return s.CurrentTurn, s.PermissionPending
	}
	return "", false
}
