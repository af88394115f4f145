// Package surgery changes a session's conversation from outside its owner.
// Repair closes a turn its owner died in (owner.RepairTurn decides how) and
// truncates a torn last log line (repair.go); Rewind continues the
// conversation from an earlier turn boundary, and a rewind to 0 clears it
// (rewind.go); Fork starts a new session from a copy of it, leaving the
// parent untouched (fork.go). Repair and Rewind take the session's owner
// lock, so neither races a live owner. The log keeps everything: a rewind
// appends an epoch fence, and a fork writes the child's whole log before
// its record (see docs/resume.md for the epochs). AdvertisedCommands and
// CompactionCommand find the agent's own command that kandev compact sends.
package surgery
