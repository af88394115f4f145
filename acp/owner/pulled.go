package owner

import (
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// runsHere refuses what a pull brought that this machine has not agreed
// to: MCP servers not yet trusted (setup.CheckTrust), and a working
// directory the remote chose outside any clone it maps to here (the
// session is paused: exit 5, and nothing is launched or mounted there).
func runsHere(s *state.Session) error {
	if err := setup.CheckTrust(s); err != nil {
		return err
	}
	if s.PulledCwd == "" || state.IsTerminal(s.State) {
		return nil
	}
	return PulledCwdRefusal(s)
}

// PulledCwdRefusal is why a session whose working directory a pull chose
// does not run here, and what to do instead.
func PulledCwdRefusal(s *state.Session) *NotResumableError {
	reason := "session " + s.ID + " is paused: its working directory " + s.PulledCwd + " came from the remote and lies outside any clone it maps to here, so no agent runs there"
	if s.Worktree != nil && !s.Worktree.Valid && s.Worktree.Problem != "" {
		reason += " (" + s.Worktree.Problem + ")"
	}
	return &NotResumableError{SessionID: s.ID, Reason: reason,
		Advice: "pull it from inside your clone of its repository (kandev pull " + s.ID + "), or carry its history to a directory of yours: kandev start --parent " + s.ID + " --cwd DIR"}
}
