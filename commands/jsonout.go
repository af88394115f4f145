package commands

import (
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
)

// The objects commands print with --json (docs/commands.md lists them).
// Fields are declared in the order of their JSON names, the order these
// objects have always had: scripts and golden outputs see the same bytes.
// A field that is only sometimes there is omitempty, with a pointer where
// a zero value is printed in the other shapes.

// JSONOutputs maps a command path ("status", "list", "close --all") to a
// zero value of the object it prints with --json, for the generated
// reference. A path with a flag names the shape that flag selects.
// Streaming commands (start, prompt, resume, compact, events --follow)
// print events first, one per line in the event log's format; the value is
// the object of their last line.
func JSONOutputs() map[string]any {
	return map[string]any{
		"agents":             AgentsOutput{},
		"answer":             AnswerOutput{},
		"approve":            AnswerOutput{},
		"archive":            SessionOutput{},
		"cancel":             ControlOutput{},
		"clear":              RewindOutput{},
		"close":              CloseOutput{},
		"close --all":        CloseAllOutput{},
		"compact":            state.Session{},
		"deny":               AnswerOutput{},
		"detach":             DetachOutput{},
		"doctor":             DoctorOutput{},
		"done":               SessionOutput{},
		"events":             EventsOutput{},
		"events --follow":    state.Session{},
		"fork":               ForkOutput{},
		"import":             ImportOutput{},
		"list":               ListOutput{},
		"prompt":             state.Session{},
		"prompt --no-follow": PromptQueuedOutput{},
		"prune":              PruneOutput{},
		"pull":               SyncOutput{},
		"push":               SyncOutput{},
		"recap":              RecapOutput{},
		"recover":            RecoverOutput{},
		"repair":             RepairOutput{},
		"resume":             ResumeOutput{},
		"rewind":             RewindOutput{},
		"search":             SearchOutput{},
		"set":                SetOutput{},
		"set --title":        SetTitleOutput{},
		"start":              state.Session{},
		"status":             StatusOutput{},
		"stop":               ControlOutput{},
		"transcript":         TranscriptPage{},
		"trust":              TrustOutput{},
		"usage":              UsageOutput{},
		"wait":               Status{},
	}
}

// ErrorOutput is what every command prints on stdout with --json when it fails.
type ErrorOutput struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo is the error's code (errorCode) and its message.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// AgentsOutput is kandev agents.
type AgentsOutput struct {
	Agents []agentRow `json:"agents"`
}

// AnswerOutput is kandev approve, deny and answer.
type AnswerOutput struct {
	Allowed   bool   `json:"allowed"`
	Always    bool   `json:"always"`
	Answer    string `json:"answer"` // the input's kind: approve, deny or answer
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
}

// SessionOutput is kandev done and archive: the session as it now is.
type SessionOutput struct {
	Session *state.Session `json:"session"`
}

// ControlOutput is kandev cancel and stop. DeliveredTo is "owner" when a
// live owner got the request, "" when there was nothing to cancel; a stop
// with no owner is recorded here instead, and Repair says what it did.
type ControlOutput struct {
	DeliveredTo *string             `json:"delivered_to,omitempty"`
	Repair      *owner.RepairReport `json:"repair,omitempty"`
	Requested   string              `json:"requested"`
	SessionID   string              `json:"session_id"`
}

// CloseOutput is kandev close of one session; SessionID is "" when no
// session of the workspace had a live owner (Unscheduled is then absent).
type CloseOutput struct {
	Closed      bool   `json:"closed"`
	SessionID   string `json:"session_id"`
	Unscheduled *bool  `json:"unscheduled,omitempty"`
}

// CloseAllOutput is kandev close --all: the sessions whose owners ended.
type CloseAllOutput struct {
	Closed []string `json:"closed"`
}

// DetachOutput is kandev detach.
type DetachOutput struct {
	Detached  string `json:"detached"` // the holder whose lease was released
	SessionID string `json:"session_id"`
}

// DoctorOutput is kandev doctor.
type DoctorOutput struct {
	Checks []check `json:"checks"`
	OK     bool    `json:"ok"`
}

// EventsOutput is kandev events (not following): each event as stored.
type EventsOutput struct {
	Events []any `json:"events"`
}

// ForkOutput is kandev fork.
type ForkOutput struct {
	Fork    ForkInfo       `json:"fork"`
	Session *state.Session `json:"session"`
}

// ForkInfo says how the fork's agent session was made.
type ForkInfo struct {
	FallbackReason string `json:"fallback_reason"`
	ForkedAt       int64  `json:"forked_at"`
	Method         string `json:"method"`
	ParentID       string `json:"parent_id"`
}

// ImportOutput is kandev import.
type ImportOutput struct {
	Import  ImportInfo    `json:"import"`
	Session state.Session `json:"session"`
}

// ImportInfo names the bundle read and the id it was exported under.
type ImportInfo struct {
	Events     int    `json:"events"`
	File       string `json:"file"`
	OriginalID string `json:"original_id"`
}

// ListOutput is kandev list.
type ListOutput struct {
	Sessions []listed `json:"sessions"`
}

// PromptQueuedOutput is kandev prompt --no-follow when a live owner queued the prompt.
type PromptQueuedOutput struct {
	Queued QueuedInput `json:"queued"`
}

// QueuedInput names a queued input.
type QueuedInput struct {
	InputID   string `json:"input_id"`
	SessionID string `json:"session_id"`
}

// PruneOutput is kandev prune.
type PruneOutput struct {
	AgentSessionsDeleted []string `json:"agent_sessions_deleted"`
	ContainersRemoved    []string `json:"containers_removed"`
	DryRun               bool     `json:"dry_run"`
	ForkLogs             []string `json:"fork_logs"`
	Pruned               []string `json:"pruned"`
	TempFiles            []string `json:"temp_files"`
	WorktreesRemoved     []string `json:"worktrees_removed"`
}

// RecapOutput is kandev recap.
type RecapOutput struct {
	Recap history.Recap `json:"recap"`
}

// RecoverOutput is kandev recover.
type RecoverOutput struct {
	Recovered []RecoverOutcome `json:"recovered"`
}

// RecoverOutcome is what recover did to one session: continued, paused or failed.
type RecoverOutcome struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// RepairOutput is kandev repair.
type RepairOutput struct {
	Repair *owner.RepairReport `json:"repair"`
}

// ResumeOutput is the last line of kandev resume.
type ResumeOutput struct {
	Attach  ResumeAttach   `json:"attach"`
	Restore ResumeRestore  `json:"restore"`
	Session *state.Session `json:"session"`
}

// ResumeAttach is the lease resume took.
type ResumeAttach struct {
	AttachExpiresAt time.Time `json:"attach_expires_at"`
	AttachedAt      time.Time `json:"attached_at"`
	AttachedTo      string    `json:"attached_to"`
	SessionID       string    `json:"session_id"`
}

// ResumeRestore is how the agent's conversation was brought back
// (acp.RestoreReattach: a live owner already ran it).
type ResumeRestore struct {
	FallbackReason string            `json:"fallback_reason"`
	Method         acp.RestoreMethod `json:"method"`
}

// RewindOutput is kandev rewind and clear. Files are never rewound.
type RewindOutput struct {
	FilesRewound bool                `json:"files_rewound"`
	Rewind       *owner.RewindReport `json:"rewind"`
}

// SearchOutput is kandev search.
type SearchOutput struct {
	Results []history.SearchHit `json:"results"`
}

// SetOutput is kandev set: the setup, whether a live owner got it (Queued)
// and applied it; when kandev set asked an owner, the steps it applied and
// what the agent does not offer (absent when the change was only recorded:
// --mcp alone).
type SetOutput struct {
	Applied    bool         `json:"applied"`
	NotOffered *[]string    `json:"not_offered,omitempty"`
	Queued     bool         `json:"queued"`
	SessionID  string       `json:"session_id"`
	Setup      *state.Setup `json:"setup"`
	Steps      *[]string    `json:"steps,omitempty"`
}

// SetTitleOutput is kandev set with only --title.
type SetTitleOutput struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

// StatusOutput is kandev status; Sync is there for a session that travels
// through a git remote.
type StatusOutput struct {
	Container *container.Container `json:"container,omitempty"`
	Session   *state.Session       `json:"session"`
	Status    Status               `json:"status"`
	Sync      *remote.Synced       `json:"sync,omitempty"`
}

// SyncOutput is kandev push and pull; Errors lists the sessions that failed (--all).
type SyncOutput struct {
	Errors   []string         `json:"errors,omitempty"`
	Sessions []*remote.Result `json:"sessions"`
}

// TrustOutput is kandev trust.
type TrustOutput struct {
	MCPServers []trustedServer `json:"mcp_servers"`
	SessionID  string          `json:"session_id"`
	Trusted    bool            `json:"trusted"`
	WasPending bool            `json:"was_pending"`
}

// UsageOutput is kandev usage.
type UsageOutput struct {
	Usage UsageReport `json:"usage"`
}

// UsageReport is the usage summed by session, agent or day; Since is
// there with --since.
type UsageReport struct {
	By     string      `json:"by"`
	Groups []*usageRow `json:"groups"`
	Since  string      `json:"since,omitempty"`
	Total  usageRow    `json:"total"`
}

// ptr is a pointer to v: a field that is absent in one shape of an
// output and present, maybe as a zero value, in another.
func ptr[T any](v T) *T { return &v }
