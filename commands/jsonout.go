package commands

import (
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/agentswitch"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
)

// The objects commands print with --json (docs/commands.md lists them).
// Fields are declared in the order of their JSON names, the order these
// objects have always had: scripts and golden outputs see the same bytes.
// A field that is only sometimes there is omitempty, with a pointer where
// a zero value is printed in the other shapes.

// jsonOutputs maps a command path ("status", "list", "close --all") to a
// zero value of the object it prints with --json, for the generated
// reference. A path with a flag names the shape that flag selects.
// Streaming commands (start, prompt, resume, compact, events --follow)
// print events first, one per line in the event log's format; the value is
// the object of their last line.
func jsonOutputs() map[string]any {
	return map[string]any{
		"agents":             agentsOutput{},
		"answer":             answerOutput{},
		"approve":            answerOutput{},
		"archive":            sessionOutput{},
		"autostart":          autostartOutput{},
		"cancel":             controlOutput{},
		"clear":              rewindOutput{},
		"close":              closeOutput{},
		"close --all":        closeAllOutput{},
		"compact":            state.Session{},
		"deny":               answerOutput{},
		"detach":             detachOutput{},
		"doctor":             doctorOutput{},
		"done":               sessionOutput{},
		"events":             eventsOutput{},
		"events --follow":    state.Session{},
		"fork":               forkOutput{},
		"import":             importOutput{},
		"list":               listOutput{},
		"prompt":             state.Session{},
		"prompt --no-follow": promptQueuedOutput{},
		"prune":              pruneOutput{},
		"pull":               syncOutput{},
		"push":               syncOutput{},
		"recap":              recapOutput{},
		"recover":            recoverOutput{},
		"repair":             repairOutput{},
		"resume":             resumeOutput{},
		"rewind":             rewindOutput{},
		"search":             searchOutput{},
		"set":                setOutput{},
		"set --title":        setTitleOutput{},
		"start":              state.Session{},
		"switch":             switchOutput{},
		"status":             statusOutput{},
		"stop":               controlOutput{},
		"transcript":         transcriptPage{},
		"trust":              trustOutput{},
		"usage":              usageOutput{},
		"wait":               Status{},
	}
}

// errorOutput is what every command prints on stdout with --json when it fails.
type errorOutput struct {
	Error errorInfo `json:"error"`
}

// errorInfo is the error's code (errorCode) and its message.
type errorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// agentsOutput is kandev agents.
type agentsOutput struct {
	Agents []agentRow `json:"agents"`
}

// answerOutput is kandev approve, deny and answer.
type answerOutput struct {
	Allowed   bool   `json:"allowed"`
	Always    bool   `json:"always"`
	Answer    string `json:"answer"` // the input's kind: approve, deny or answer
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
}

// sessionOutput is kandev done and archive: the session as it now is.
type sessionOutput struct {
	Session *state.Session `json:"session"`
}

// controlOutput is kandev cancel and stop. DeliveredTo is "owner" when a
// live owner got the request, "" when there was nothing to cancel; a stop
// with no owner is recorded here instead, and Repair says what it did.
type controlOutput struct {
	DeliveredTo *string               `json:"delivered_to,omitempty"`
	Repair      *surgery.RepairReport `json:"repair,omitempty"`
	Requested   string                `json:"requested"`
	SessionID   string                `json:"session_id"`
}

// closeOutput is kandev close of one session; SessionID is "" when no
// session of the workspace had a live owner (Unscheduled is then absent).
type closeOutput struct {
	Closed      bool   `json:"closed"`
	SessionID   string `json:"session_id"`
	Unscheduled *bool  `json:"unscheduled,omitempty"`
}

// closeAllOutput is kandev close --all: the sessions whose owners ended.
type closeAllOutput struct {
	Closed []string `json:"closed"`
}

// detachOutput is kandev detach.
type detachOutput struct {
	Detached  string `json:"detached"` // the holder whose lease was released
	SessionID string `json:"session_id"`
}

// doctorOutput is kandev doctor.
type doctorOutput struct {
	Checks []check `json:"checks"`
	OK     bool    `json:"ok"`
}

// eventsOutput is kandev events (not following): each event as stored.
type eventsOutput struct {
	Events []any `json:"events"`
}

// forkOutput is kandev fork.
type forkOutput struct {
	Fork    forkInfo       `json:"fork"`
	Session *state.Session `json:"session"`
}

// forkInfo says how the fork's agent session was made.
type forkInfo struct {
	FallbackReason string `json:"fallback_reason"`
	ForkedAt       int64  `json:"forked_at"`
	Method         string `json:"method"`
	ParentID       string `json:"parent_id"`
}

// importOutput is kandev import.
type importOutput struct {
	Import  importInfo    `json:"import"`
	Session state.Session `json:"session"`
}

// importInfo names the bundle read and the id it was exported under.
type importInfo struct {
	Events     int    `json:"events"`
	File       string `json:"file"`
	OriginalID string `json:"original_id"`
}

// listOutput is kandev list.
type listOutput struct {
	Sessions []listed `json:"sessions"`
}

// promptQueuedOutput is kandev prompt --no-follow when a live owner queued the prompt.
type promptQueuedOutput struct {
	Queued queuedInput `json:"queued"`
}

// queuedInput names a queued input.
type queuedInput struct {
	InputID   string `json:"input_id"`
	SessionID string `json:"session_id"`
}

// pruneOutput is kandev prune.
type pruneOutput struct {
	AgentSessionsDeleted []string `json:"agent_sessions_deleted"`
	ContainersRemoved    []string `json:"containers_removed"`
	DryRun               bool     `json:"dry_run"`
	ForkLogs             []string `json:"fork_logs"`
	Pruned               []string `json:"pruned"`
	TempFiles            []string `json:"temp_files"`
	WorktreesRemoved     []string `json:"worktrees_removed"`
}

// recapOutput is kandev recap.
type recapOutput struct {
	Recap history.Recap `json:"recap"`
}

// recoverOutput is kandev recover.
type recoverOutput struct {
	Recovered []recoverOutcome `json:"recovered"`
}

// recoverOutcome is what recover did to one session: continued, paused or failed.
type recoverOutcome struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// repairOutput is kandev repair.
type repairOutput struct {
	Repair *surgery.RepairReport `json:"repair"`
}

// resumeOutput is the last line of kandev resume.
type resumeOutput struct {
	Attach  resumeAttach   `json:"attach"`
	Restore resumeRestore  `json:"restore"`
	Session *state.Session `json:"session"`
}

// resumeAttach is the lease resume took.
type resumeAttach struct {
	AttachExpiresAt time.Time `json:"attach_expires_at"`
	AttachedAt      time.Time `json:"attached_at"`
	AttachedTo      string    `json:"attached_to"`
	SessionID       string    `json:"session_id"`
}

// resumeRestore is how the agent's conversation was brought back
// (acp.RestoreReattach: a live owner already ran it).
type resumeRestore struct {
	FallbackReason string            `json:"fallback_reason"`
	Method         acp.RestoreMethod `json:"method"`
}

// rewindOutput is kandev rewind and clear. Files are never rewound.
type rewindOutput struct {
	FilesRewound bool                  `json:"files_rewound"`
	Rewind       *surgery.RewindReport `json:"rewind"`
}

// searchOutput is kandev search.
type searchOutput struct {
	Results []history.SearchHit `json:"results"`
}

// setOutput is kandev set: the setup, whether a live owner got it (Queued)
// and applied it; when kandev set asked an owner, the steps it applied and
// what the agent does not offer (absent when the change was only recorded:
// --mcp alone).
type setOutput struct {
	Applied    bool         `json:"applied"`
	NotOffered *[]string    `json:"not_offered,omitempty"`
	Queued     bool         `json:"queued"`
	SessionID  string       `json:"session_id"`
	Setup      *state.Setup `json:"setup"`
	Steps      *[]string    `json:"steps,omitempty"`
}

// setTitleOutput is kandev set with only --title.
type setTitleOutput struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

// statusOutput is kandev status; Sync is there for a session that travels
// through a git remote.
type statusOutput struct {
	// Children are the agent's subagents and background tasks, as the log
	// records them (none: []).
	Children  []subagents.Child    `json:"children"`
	Container *container.Container `json:"container,omitempty"`
	Session   *state.Session       `json:"session"`
	Status    Status               `json:"status"`
	Sync      *remote.Synced       `json:"sync,omitempty"`
}

// syncOutput is kandev push and pull; Errors lists the sessions that failed (--all).
type syncOutput struct {
	Errors   []string         `json:"errors,omitempty"`
	Sessions []*remote.Result `json:"sessions"`
}

// trustOutput is kandev trust.
type trustOutput struct {
	MCPServers []trustedServer `json:"mcp_servers"`
	SessionID  string          `json:"session_id"`
	Trusted    bool            `json:"trusted"`
	WasPending bool            `json:"was_pending"`
}

// usageOutput is kandev usage.
type usageOutput struct {
	Usage usageReport `json:"usage"`
}

// usageReport is the usage summed by session, agent or day; Since is
// there with --since.
type usageReport struct {
	By     string      `json:"by"`
	Groups []*usageRow `json:"groups"`
	Since  string      `json:"since,omitempty"`
	Total  usageRow    `json:"total"`
}

// ptr is a pointer to v: a field that is absent in one shape of an
// output and present, maybe as a zero value, in another.
func ptr[T any](v T) *T { return &v }

// switchOutput is kandev switch (with a prompt, the prompt's stream follows it).
type switchOutput struct {
	ForkedFrom string              `json:"forked_from,omitempty"`
	Session    *state.Session      `json:"session"`
	Switch     *agentswitch.Report `json:"switch"`
}
