package owner

import (
	"context"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/notify"
	"github.com/kandev/kandev/state"
)

// Job is one run of a session's owner: what to restore and what to send.
// Its fields are grouped by who sets them.
type Job struct {
	// The session, as the caller found it: its record's home and id, the
	// configuration, the agent's profile and the permission mode
	// (commands' ownerJob, the editor).
	Home        *state.Home
	Config      *config.Config
	SessionID   string
	Profile     acp.Profile
	Permissions string
	// Record is the record as the caller read it before any owner ran
	// (nil: read it when needed). Only what follows the owner from outside
	// uses it; an owner reads the record again under its lock.
	Record *state.Session

	// What the command asks of the owner.

	// Prompt is the user's message; "" restores the agent and serves what is
	// pending (initial prompt, continuation, queued inputs) only.
	Prompt string
	// InitialPrompt is the session's initial prompt as the user typed it
	// (the record keeps it redacted until it is sent).
	InitialPrompt string
	// NoContinue turns off the automatic continuation of an interrupted turn.
	NoContinue bool
	// Offline runs the turns of a session that travels between machines on
	// this machine's copy when its remote does not answer (--offline): no
	// claim is held, and a marker in the log says so.
	Offline bool
	// Maintenance is an agent command (e.g. "/compact") sent as a
	// maintenance turn: it does not spend a pending resume context, and if
	// it is cut off it is not continued automatically.
	Maintenance string
	// AfterLimit: continue the session when the usage limit that stopped
	// it has reset (kandev recover).
	AfterLimit bool
	// Unattended: nobody follows this owner's own turns (kandev recover, a
	// scheduled wake): they wait before the agent's limit ([limits]
	// pause_at_percent) and count against the after-reset budget.
	Unattended bool
	// OwnInput is the inbox input this process queued itself: its turn is
	// emitted; turns served for other processes' inputs are not.
	OwnInput string
	// Queued are the sender's choices a prompt queued for a live owner
	// carries (inbox.go).
	Queued QueuedChoices

	// How the owner reaches the person: the terminal's or the editor's
	// callbacks. Each may be nil unless it says otherwise.

	// Emit receives every event once it is in the log, in seq order.
	Emit func(eventlog.Event)
	// Progress reports start-up steps ("launching agent", ...).
	Progress func(string)
	// Warn reports a failure that is not this command's own (a queued input
	// of another process whose turn failed).
	Warn func(string)
	// Ask answers a permission request in ask mode; nil means deny.
	Ask func(req sdk.RequestPermissionRequest) bool
	// AskOption, when set, answers in ask mode instead of Ask with the id of
	// the option chosen ("" for none: a denial): the agent gets that very
	// option (an editor's "allow always" stays "allow always").
	AskOption func(req sdk.RequestPermissionRequest) string
	// AskParked, when set, asks the person on this command's terminal about
	// a request its turn's owner parked for it (ask mode, the owner in
	// another process): allow, always, and ok false when the asking was
	// interrupted (nothing is answered). Only a terminal sets it.
	AskParked func(ctx context.Context, title string, options []sdk.PermissionOption) (allow, always, ok bool)
	// AskValue, when set, asks the person on this command's terminal an
	// agent's question (its fields named): the line typed ("" declines),
	// and ok false when the asking was interrupted. Only a terminal sets it.
	AskValue func(ctx context.Context, question string, fields []string) (value string, ok bool)
	// Asker, for a detached owner: its own turns (the initial prompt, a
	// continuation) park ask-mode requests for the command that started it,
	// which asks them while it runs (nil: they are not parked).
	Asker *state.Asker
	// Offered, when set, is given the agent's setup (its modes, models and
	// config options, as it answered them) once it is restored and again
	// whenever it changes.
	Offered func(acp.AgentSetup)
	// Next returns the next interactive prompt (resume -i); nil for none.
	Next func() (string, bool)
	// Notify tells a person the session needs them ([notify]); nil for
	// none. It never waits on the hook; failed is called when the hook
	// fails, on another goroutine (never Notify's own caller's).
	Notify func(n notify.Note, failed func(error))
	// Abort is closed when the owner must stop at once (a second SIGINT or
	// SIGTERM): the agent's process group is killed without waiting.
	Abort <-chan struct{}

	// How long the owner lives and where it runs (--linger, detached owners).

	// Linger keeps the owner and its idle agent alive this long after the
	// last turn, serving inputs that arrive (0: exit at once).
	Linger time.Duration
	// Detach, when set, are the arguments of a kandev process that runs the
	// owner detached (Dial starts it); nil runs the owner in this process.
	Detach []string
	// Detached: this process is the detached owner (kandev __serve).
	Detached bool
	// Serve are the arguments of a detached owner that serves inputs left in
	// the inbox when this process stops owning the session (nil: none).
	Serve []string

	// Seams for tests.

	// Launch starts the agent; nil launches it as an OS process
	// (acp.LaunchProcess).
	Launch acp.Launcher
	// Outlives: the agent may outlive its owner (it runs in a container,
	// docs/containers.md); the owner connects to it before it plans, and
	// takes over a turn an owner that died left running (reattach.go).
	Outlives bool
	// Now is the clock for record times and the continuation budget; nil is time.Now.
	Now func() time.Time
}

// Result is what the owner did.
type Result struct {
	Session        *state.Session
	Restore        acp.RestoreMethod
	FallbackReason string
	StopReason     string // of the last turn run, "" if none

	// started: the owner read the record under its lock, whose inbox
	// offset was then inboxFrom (serve's rounds compare it).
	started   bool
	inboxFrom int64
}
