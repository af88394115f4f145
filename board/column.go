// Package board is kandev board: every session of a home in columns by
// what it needs from a person, live while the home changes, with keys that
// act through the same commands a person would type. The policy (which
// column, what a card says, what a key runs) is pure and table-tested; the
// terminal program, its screen and the file watch are at the edges
// (board.go, screen.go, frame.go, live.go). Idle, the board wakes for
// nothing: it draws only when a message changed what it shows.
package board

import "github.com/kandev/kandev/verdict"

// Column is where a session goes on the board.
type Column int

// The columns, left to right: what needs a person first.
const (
	NeedsYou Column = iota
	Running
	NeedsResume
	WarmIdle
	Done
	numColumns
)

// Columns is every column in board order.
var Columns = []Column{NeedsYou, Running, NeedsResume, WarmIdle, Done}

// Title is the column's heading.
func (c Column) Title() string {
	return [...]string{"Needs you", "Running", "Needs resume", "Warm / idle", "Done"}[c]
}

// Key is the column's name in --json.
func (c Column) Key() string {
	return [...]string{"needs_you", "running", "needs_resume", "warm_idle", "done"}[c]
}

// ColumnOf is the column of a session with badge (the one list and status
// compute). A person is needed by a parked permission or question, a usage
// limit, a failure, a paused continuation and a record kandev cannot read;
// anything else a badge may become later waits in Warm / idle, where it is
// seen, rather than vanishing.
func ColumnOf(badge string) Column {
	switch badge {
	case verdict.BadgeWaitingForPermission, verdict.BadgeWaitingForLimit, verdict.BadgeFailed,
		verdict.BadgePaused, verdict.BadgeUnknown:
		return NeedsYou
	case verdict.BadgeRunning:
		return Running
	case verdict.BadgeNeedsResume:
		return NeedsResume
	case verdict.BadgeDone, verdict.BadgeCancelled:
		return Done
	}
	return WarmIdle // idle, stopped
}
