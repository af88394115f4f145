package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/safefile"
)

// Typed errors that commands map to exit codes in one place.
var (
	ErrNotFound    = eventlog.ErrNotFound
	ErrAmbiguous   = errors.New("ambiguous")
	ErrInvalidID   = errors.New("invalid session id")
	ErrLeaseHeld   = errors.New("lease held by another holder")
	ErrOwnerBusy   = errors.New("session owned by another process")
	ErrTornLine    = errors.New("torn last line")
	ErrCorruptLine = errors.New("corrupt line")
)

const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// Home is a $KANDEV_HOME directory.
type Home struct{ Dir string }

// OpenHome makes sure dir and its sessions folder exist with 0700 permissions,
// and refuses a home written by a newer kandev (see Format).
func OpenHome(dir string) (*Home, error) {
	if dir == "" {
		return nil, errors.New("no kandev home: set --home or KANDEV_HOME")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	h := &Home{Dir: abs}
	if err := safefile.RefuseLinkedDirs(h.sessionsDir()); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.sessionsDir(), dirPerm); err != nil {
		return nil, fmt.Errorf("create kandev home %s: %w", abs, err)
	}
	if err := h.checkFormat(); err != nil {
		return nil, err
	}
	return h, nil
}

// DefaultHomeDir is ~/.kandev. With no home directory (HOME unset) it is an
// error: a home relative to the current directory would scatter sessions.
func DefaultHomeDir() (string, error) {
	d, err := os.UserHomeDir()
	if err != nil || d == "" {
		return "", errors.New("no kandev home: neither KANDEV_HOME nor HOME is set; set KANDEV_HOME or pass --home DIR")
	}
	return filepath.Join(d, ".kandev"), nil
}

func (h *Home) sessionsDir() string { return filepath.Join(h.Dir, "sessions") }

// LogPath is the session's event log.
func (h *Home) LogPath(id string) string { return filepath.Join(h.sessionsDir(), id+".jsonl") }

// RecordPath is the session record.
func (h *Home) RecordPath(id string) string { return filepath.Join(h.sessionsDir(), id+".json") }

// LockPath is the owner lock, held by the owner for its whole life.
func (h *Home) LockPath(id string) string { return filepath.Join(h.sessionsDir(), id+ownerLockSuffix) }

const ownerLockSuffix = ".owner.lock"

// AgentLockPath is held by the supervisor of the session's agent for as long
// as the agent's process tree lives, also after its owner has returned.
func (h *Home) AgentLockPath(id string) string {
	return filepath.Join(h.sessionsDir(), id+".agent.lock")
}

// RecordLockPath guards read-modify-write of the record, the lease and the inbox.
func (h *Home) RecordLockPath(id string) string {
	return filepath.Join(h.sessionsDir(), id+".record.lock")
}

// InboxPath is the queue of inputs for the owner.
func (h *Home) InboxPath(id string) string { return filepath.Join(h.sessionsDir(), id+".inbox.jsonl") }

// LeasePath is the attach lease.
func (h *Home) LeasePath(id string) string {
	return filepath.Join(h.sessionsDir(), id+leaseSuffix+".json")
}

const leaseSuffix = ".lease"

// OwnerOutPath is where a detached owner's stdout and stderr go.
func (h *Home) OwnerOutPath(id string) string {
	return filepath.Join(h.sessionsDir(), id+".owner.out")
}

// PromptHandoffPath holds a prompt as typed, passed by the command that
// starts a detached owner (the record keeps only its redacted form).
func (h *Home) PromptHandoffPath(id string) string {
	return filepath.Join(h.sessionsDir(), id+".prompt")
}

// DigestPath is where kandev caches the recap digest of session id's log: a
// summary of the log up to a turn, rebuilt from the log when missing or
// stale, never the only copy of anything.
func (h *Home) DigestPath(id string) string { return filepath.Join(h.sessionsDir(), id+".digest") }

// DemoAgentDir is where the demo agent keeps its own session files.
func (h *Home) DemoAgentDir() string { return filepath.Join(h.Dir, "demo-agent") }

// ConfigPath is the default config file.
func (h *Home) ConfigPath() string { return filepath.Join(h.Dir, "config.toml") }

// SessionFiles lists every file that belongs to session id.
func (h *Home) SessionFiles(id string) []string {
	return []string{h.LogPath(id), h.RecordPath(id), h.LockPath(id), h.RecordLockPath(id), h.InboxPath(id), h.LeasePath(id), h.DigestPath(id), h.OwnerOutPath(id), h.PromptHandoffPath(id), h.AgentLockPath(id)}
}

// ValidateID rejects ids that could escape the sessions directory.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > 128:
		return fmt.Errorf("%w %q: too long", ErrInvalidID, id)
	case strings.Contains(id, ".."), strings.ContainsAny(id, `/\`), strings.ContainsRune(id, 0):
		return fmt.Errorf("%w %q: ids cannot contain path separators or \"..\"", ErrInvalidID, id)
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("%w %q: only letters, digits, '-' and '_' are allowed", ErrInvalidID, id)
		}
	}
	return nil
}
