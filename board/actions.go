package board

import (
	"github.com/kandev/kandev/verdict"
)

// Action is what a key does to the selected card: the kandev command it
// runs (the same a person would type), and how.
type Action struct {
	Name string
	Args []string // the command line after "kandev"
	// Foreground actions take the terminal (attach, resume, the pager)
	// and the board comes back when they end; the others run beside it and
	// their outcome is one line.
	Foreground bool
	// NeedsText: the action wants a line typed first (answer), appended
	// to Args.
	NeedsText bool
	Pager     bool // Args' output is shown in the pager
}

// Action names, one per key (keys.go binds them).
const (
	ActAttach     = "attach"
	ActApprove    = "approve"
	ActDeny       = "deny"
	ActAnswer     = "answer"
	ActResume     = "resume"
	ActCancel     = "cancel"
	ActClose      = "close"
	ActTranscript = "transcript"
)

// ActionFor is what action name does to card c, or why it does nothing
// (a one-line message). It offers an action only where the command can
// succeed as far as the card shows; the command itself has the last word.
func ActionFor(name string, c *Card) (Action, string) {
	if c == nil {
		return Action{}, "no session selected"
	}
	if c.Problem != "" {
		return Action{}, "session " + c.ID + " has an unreadable record: kandev doctor checks it"
	}
	done := c.Column() == Done
	id := c.ID
	switch name {
	case ActAttach:
		if done {
			return Action{}, "session " + c.ID + " is finished: nothing to attach to"
		}
		return Action{Name: name, Args: []string{"attach", id}, Foreground: true}, ""
	case ActApprove:
		if c.Parked != "permission" {
			return Action{}, "no permission request waits in " + id
		}
		return Action{Name: name, Args: []string{"approve", id}}, ""
	case ActDeny:
		if c.Parked == "" {
			return Action{}, "no permission request or question waits in " + id
		}
		return Action{Name: name, Args: []string{"deny", id}}, ""
	case ActAnswer:
		if c.Parked != "question" {
			return Action{}, "no question waits in " + id
		}
		return Action{Name: name, Args: []string{"answer", id}, NeedsText: true}, ""
	case ActResume:
		if done {
			return Action{}, "session " + id + " is finished: kandev start --parent " + id + " carries on from it"
		}
		return Action{Name: name, Args: []string{"resume", id}, Foreground: true}, ""
	case ActCancel:
		if c.Badge != verdict.BadgeRunning && c.Badge != verdict.BadgeWaitingForPermission {
			return Action{}, "no turn runs in " + id
		}
		return Action{Name: name, Args: []string{"cancel", id}}, ""
	case ActClose:
		if c.Badge != verdict.BadgeRunning && c.Badge != verdict.BadgeWaitingForPermission && c.WarmUntil == nil {
			return Action{}, "no live owner runs " + id
		}
		return Action{Name: name, Args: []string{"close", id}}, ""
	case ActTranscript:
		return Action{Name: name, Args: []string{"transcript", id}, Pager: true}, ""
	}
	return Action{}, "unknown action " + name
}
