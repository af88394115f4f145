package state

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/internal/worktree"
)

// ErrRecordID is a session record whose id field is not its file name.
// Paths are built from ids, so such a record is refused rather than used.
var ErrRecordID = errors.New("a record's id must be its file name (fix the id field or move the file out of the home)")

// Session states (see docs/resume.md).
const (
	StateCreated         = "CREATED"
	StateStarting        = "STARTING"
	StateRunning         = "RUNNING"
	StateWaitingForInput = "WAITING_FOR_INPUT"
	StateCompleted       = "COMPLETED"
	StateFailed          = "FAILED"
	StateCancelled       = "CANCELLED"
)

// IsTerminal reports whether state blocks resume.
func IsTerminal(state string) bool {
	return state == StateCompleted || state == StateFailed || state == StateCancelled
}

// TaskStateFor mirrors a session state as a task state.
func TaskStateFor(state string) string {
	switch state {
	case StateCreated:
		return "TODO"
	case StateStarting, StateRunning:
		return "IN_PROGRESS"
	case StateWaitingForInput:
		return "REVIEW"
	default:
		return state
	}
}

// Session is the session record (see docs/resume.md) plus the bookkeeping kandev
// needs to restore it. The record is replaced atomically on every change.
type Session struct {
	// Format is the format version of the record and of its event log (0: a
	// record written before formats were numbered).
	Format int    `json:"format"`
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	Title  string `json:"title"`
	// TitleNamed: the person named the session (start or fork --title,
	// kandev set --title), so a title the agent sends does not replace it.
	TitleNamed     bool               `json:"title_named,omitempty"`
	Workspace      string             `json:"workspace"`
	Cwd            string             `json:"cwd"`
	Agent          string             `json:"agent"`
	State          string             `json:"state"`
	TaskState      string             `json:"task_state"`
	StopReason     string             `json:"stop_reason"`
	ParentID       string             `json:"parent_id"`
	CreatedAt      time.Time          `json:"created_at"`
	LastActivityAt time.Time          `json:"last_activity_at"`
	ResumeToken    string             `json:"resume_token"`
	Worktree       *worktree.Worktree `json:"worktree"`
	ErrorMessage   string             `json:"error_message"`
	// ForkedAt is the seq of the parent's log this session was forked at
	// (0: not a fork); its log starts with a copy of the parent's
	// conversation up to there.
	ForkedAt int64 `json:"forked_at,omitempty"`
	// Epoch counts the rewinds and clears of the conversation: the log's
	// rewind events fence off what the agent no longer knows.
	Epoch int `json:"epoch,omitempty"`
	// RewindPending is a rewind recorded here but perhaps not yet in the
	// log: the next command that owns the session appends its fence.
	RewindPending *eventlog.Rewind `json:"rewind_pending,omitempty"`
	// SwitchPending is an agent switch recorded here (Agent is already its
	// To) but perhaps not yet in the log: the next command that owns the
	// session appends its agent_switched event (state/switch.go).
	SwitchPending *AgentSwitch `json:"agent_switch_pending,omitempty"`
	// AgentNew: the agent was switched and has not started since, so its
	// first start answers for the setup as a new session's does.
	AgentNew bool `json:"agent_new,omitempty"`

	// AgentCommand is the command line the session's agent was launched with;
	// a change pauses automatic continuation.
	AgentCommand []string `json:"agent_command,omitempty"`
	// Runtime is where the agent runs: "container" (docs/containers.md), or
	// "" for a local process.
	Runtime string `json:"runtime,omitempty"`
	// AgentLaunched is set once an agent process was started for the session.
	AgentLaunched bool `json:"agent_launched,omitempty"`
	// AgentPID and AgentStart identify the live agent's supervisor, the leader
	// of its process group (with its start time, so a reused pid is not
	// mistaken for it).
	AgentPID   int    `json:"agent_pid,omitempty"`
	AgentStart string `json:"agent_start,omitempty"`
	OwnerPID   int    `json:"owner_pid,omitempty"`
	// Capabilities is the agent's advertised initialize response (agent info included).
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// PendingContext is set when the next prompt must carry the resume
	// context; cleared once the agent accepted such a prompt.
	PendingContext bool `json:"pending_resume_context,omitempty"`
	// InitialPrompt is kept until it is sent to the agent (prompt_sent), so
	// a session cut off before that sends it then; a sent one is continued.
	InitialPrompt string `json:"initial_prompt,omitempty"`
	// CurrentTurn is the turn in progress ("" when none).
	CurrentTurn string `json:"current_turn,omitempty"`
	Turns       int    `json:"turns,omitempty"`
	// Subagents counts the children (subagents, background tasks) the
	// agent started, as the log records them (child_started).
	Subagents int `json:"subagents,omitempty"`
	// PermissionPending is set while a permission request waits for an answer.
	PermissionPending bool `json:"permission_pending,omitempty"`
	// ParkedRequests are the deferred permission requests waiting for
	// kandev approve or deny, oldest first (meaningful while the owner lives).
	ParkedRequests []ParkedRequest `json:"parked_requests,omitempty"`
	// OwnerDetached is set while the owner is a detached process (one that
	// lingers or defers permissions), which a queued --linger can change.
	OwnerDetached bool `json:"owner_detached,omitempty"`
	// Pause says why automatic continuation of the interrupted turn waits
	// for an operator (nil when it does not).
	Pause *Pause `json:"pause,omitempty"`
	// Interrupted is the repaired turn waiting for its one continuation.
	Interrupted *Interruption `json:"interrupted_turn,omitempty"`
	// TurnPermissionMode is the permission mode the latest turn ran under;
	// a different mode pauses its continuation.
	TurnPermissionMode string `json:"turn_permission_mode,omitempty"`
	// WarmUntil is when a lingering owner shuts its idle agent down (nil
	// when no owner lingers).
	WarmUntil *time.Time `json:"warm_until,omitempty"`
	// Stopped is set by kandev stop until the next prompt.
	Stopped bool `json:"stopped,omitempty"`
	// RestartAttempts are the times of automatic continuations, for the budget.
	RestartAttempts []time.Time `json:"restart_attempts,omitempty"`
	// ContinuedTurn is the interrupted turn a continuation was sent for.
	ContinuedTurn string `json:"continued_turn,omitempty"`
	// StartKey is the idempotency key of the kandev start --key that created it.
	StartKey string `json:"start_key,omitempty"`
	// Limit is the usage limit that ended the last turn (nil once a turn ran since).
	Limit *UsageLimit `json:"usage_limit,omitempty"`
	// LimitResumes counts the automatic continuations after a usage limit
	// since a turn last ended otherwise (the resume_after_limit budget).
	LimitResumes int `json:"limit_resumes,omitempty"`
	// RateLimit is the agent's usage window as it last reported it.
	RateLimit *RateWindow `json:"rate_limit,omitempty"`
	// AfterReset counts unattended continuation since the last reset.
	AfterReset *AfterReset `json:"after_reset,omitempty"`
	// LastWake is what the last unattended wake (kandev recover) did.
	LastWake *WakeReport `json:"last_wake,omitempty"`
	// InboxOffset is the byte offset in the inbox up to which inputs were served.
	InboxOffset int64 `json:"inbox_offset,omitempty"`
	// InboxServed counts the inbox entries consumed (the queue generation).
	InboxServed int64 `json:"inbox_served,omitempty"`
	// Usage are the totals of the session's usage events; UsageCount is
	// how its cost was counted (AccountUsage).
	Usage      *UsageTotals `json:"usage,omitempty"`
	UsageCount *UsageCount  `json:"usage_count,omitempty"`
	// Setup is the agent's setup (model, mode, options, MCP server names),
	// MCPConfig the servers themselves (with ${VAR} references, never
	// secrets), and TurnSetup the setup the latest turn ran under: a
	// different one pauses its continuation (package setup).
	Setup     *Setup      `json:"setup,omitempty"`
	MCPConfig []MCPServer `json:"mcp_config,omitempty"`
	TurnSetup *Setup      `json:"turn_setup,omitempty"`
	// TrustPending: the MCP servers came from another machine (kandev pull)
	// and this one has not agreed to run them (kandev trust, or a local
	// kandev set --mcp). Machine-local: a pull decides it from what this
	// machine trusted, never from the remote's record.
	TrustPending bool `json:"trust_pending,omitempty"`
	// PulledCwd is a working directory a pull brought that lies outside any
	// clone it maps to on this machine: the remote chose it, so no agent
	// runs there (the session is paused; kandev start --parent ID carries
	// its history to a directory of this machine's). Machine-local.
	PulledCwd string `json:"pulled_cwd,omitempty"`

	// Unknown holds the record's keys that a newer kandev wrote, kept as
	// they are so that a rewrite by this kandev preserves them.
	Unknown map[string]json.RawMessage `json:"-"`
}

// NewID returns a fresh session id: a sortable time prefix and random bytes.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// CreateSession writes a new record; it fails if the id is taken.
func (h *Home) CreateSession(s *Session) error {
	if err := ValidateID(s.ID); err != nil {
		return err
	}
	if _, err := os.Stat(h.RecordPath(s.ID)); err == nil {
		return fmt.Errorf("session %s already exists", s.ID)
	}
	s.Format = Format
	s.TaskState = TaskStateFor(s.State)
	if err := CheckNesting(s.Capabilities); err != nil { // the one raw value a caller sets
		return fmt.Errorf("session %s: capabilities: %w", s.ID, err)
	}
	b, err := encodeRecord(s)
	if err != nil {
		return err
	}
	return safefile.WriteFileAtomic(h.RecordPath(s.ID), b)
}

// recordBufs are read buffers for records (and leases), reused across the
// thousands a listing or a usage report reads.
var recordBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// LoadSession reads the record of session id.
func (h *Home) LoadSession(id string) (*Session, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	buf := recordBufs.Get().(*[]byte)
	defer recordBufs.Put(buf)
	b, err := safefile.ReadRecordFile(safefile.AtCWD, "", h.RecordPath(id), (*buf)[:0])
	*buf = b // recordFrom copies what it keeps: the buffer serves the next record
	return h.recordFrom(id, b, err)
}

// recordFrom is the record of session id from b, its file as read (err:
// why it could not be read).
func (h *Home) recordFrom(id string, b []byte, err error) (*Session, error) {
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
		return nil, err
	}
	var s Session
	err = decodeRecord(b, &s)
	if err != nil { // perhaps a short read of a file edited in place: read it whole
		if b, err = safefile.ReadFile(h.RecordPath(id)); err == nil {
			s = Session{}
			err = decodeRecord(b, &s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("session record %s is corrupt: %w; run kandev doctor", h.RecordPath(id), err)
	}
	if s.Format > Format {
		return nil, &NewerFormatError{What: "session " + id, Format: s.Format}
	}
	if s.ID != id { // paths are built from the id: only the file name is trusted
		return nil, fmt.Errorf("session record %s names id %q: %w", h.RecordPath(id), s.ID, ErrRecordID)
	}
	return &s, nil
}

// UpdateSession applies fn to the record under the record lock and writes
// it back atomically. It returns the record as written. When fn changes
// nothing, the record on disk (written atomically and durably before) is
// already the result, and it is not written again: two fsyncs saved.
func (h *Home) UpdateSession(id string, fn func(*Session) error) (*Session, error) {
	unlock, err := h.LockRecord(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := h.LoadSession(id)
	if err != nil {
		return nil, err
	}
	s.Format = Format // an older record is upgraded when it is next written
	before, err := encodeRecord(s)
	if err != nil {
		return nil, err
	}
	if err := fn(s); err != nil {
		return nil, err
	}
	s.TaskState = TaskStateFor(s.State)
	after, err := encodeRecord(s)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(before, after) {
		return s, nil
	}
	if err := safefile.WriteFileAtomic(h.RecordPath(id), after); err != nil {
		return nil, err
	}
	return s, nil
}

// ChangedBy reports whether fn changes s as UpdateSession would write it;
// fn runs on a copy, s is left as it was.
func (s *Session) ChangedBy(fn func(*Session)) bool {
	b, err := encodeRecord(s)
	if err != nil {
		return true
	}
	var c Session
	if decodeRecord(b, &c) != nil {
		return true
	}
	c.Format = Format
	before, err := encodeRecord(&c)
	if err != nil {
		return true
	}
	fn(&c)
	c.TaskState = TaskStateFor(c.State)
	after, err := encodeRecord(&c)
	return err != nil || !bytes.Equal(before, after)
}

// LockRecord takes the lock that serialises read-modify-write of a session's
// record, lease and inbox. It blocks; the returned func releases it.
func (h *Home) LockRecord(id string) (func(), error) {
	fl := newLock(h.RecordLockPath(id))
	if err := fl.Lock(); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, lockFileError(fl.Path(), err))
	}
	return func() { _ = fl.Unlock() }, nil
}

// ListSessions returns every readable session record, newest activity first.
func (h *Home) ListSessions() ([]*Session, error) {
	ss, _, err := h.listSessionsReport()
	return ss, err
}

// SortByActivity orders sessions newest activity first (id breaks ties:
// ids are unique, so the order is total and needs no stable sort).
func SortByActivity(ss []*Session) {
	slices.SortFunc(ss, func(a, b *Session) int {
		if c := b.LastActivityAt.Compare(a.LastActivityAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
}

// ResolveID turns a full id or a unique id prefix into a session id.
func (h *Home) ResolveID(ref string) (string, error) {
	if err := ValidateID(ref); err != nil {
		return "", err
	}
	if _, err := os.Stat(h.RecordPath(ref)); err == nil {
		return ref, nil
	}
	matches, _ := filepath.Glob(filepath.Join(h.sessionsDir(), ref+"*.json"))
	var ids []string
	for _, m := range matches {
		if id := strings.TrimSuffix(filepath.Base(m), ".json"); ValidateID(id) == nil {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no session %q: %w (run kandev list to see sessions)", ref, ErrNotFound)
	case 1:
		return ids[0], nil
	}
	sort.Strings(ids)
	n := len(ids)
	if n > 5 {
		ids = append(ids[:5], "...")
	}
	return "", fmt.Errorf("%w: %q matches %d sessions (%s); give more of the id", ErrAmbiguous, ref, n, strings.Join(ids, ", "))
}

// DeleteSessionFiles removes every file of session id.
func (h *Home) DeleteSessionFiles(id string) error {
	var errs []error
	for _, p := range h.SessionFiles(id) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
