// Package autostart installs, removes and reports kandev's login-time job:
// the operating system runs `kandev recover --all` once when the user logs
// in, for the home that was in force when the job was enabled, so work a
// reboot interrupted is continued (once) with no kandev process waiting
// for anything. The job is a systemd user unit on Linux, a launchd agent
// with RunAtLoad on macOS and a Task Scheduler logon task on Windows.
//
// What the job says (the unit, the property list, the task XML) is built
// by pure functions (job.go); installing it is this package's only I/O,
// one file per platform. Enable never leaves half a job behind: what it
// wrote is removed again when a later step fails.
package autostart

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
)

// ErrNoScheduler: this machine has no login-time scheduler kandev can use
// (the error names what is missing).
var ErrNoScheduler = errors.New("no login-time scheduler")

// Job is the login-time job for one kandev home.
type Job struct {
	Exe  string // the kandev binary, an absolute path
	Home string // the home it recovers, an absolute path
}

// Argv is the command the job runs (KANDEV_HOME is set beside it).
func (j Job) Argv() []string { return []string{j.Exe, "recover", "--all"} }

// Name is the job's name for home: one job per home, so two homes can
// each have theirs.
func Name(home string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(home)))
	return "kandev-recover-" + hex.EncodeToString(sum[:4])
}

// Status is whether a home's job is installed, and where.
type Status struct {
	On bool `json:"on"`
	// Via is the scheduler: "systemd", "launchd", "schtasks".
	Via string `json:"via"`
	// Where is the unit, the property list or the task name.
	Where string `json:"where"`
}
