// Package failpoint names the points where crash tests cut into kandev.
//
// A failpoint does nothing unless the environment variable KANDEV_FAILPOINT
// names it; then the process waits there until its context ends, so a test
// can send SIGKILL, SIGTERM or SIGINT at exactly that point. It exists for
// tests and changes no behaviour in normal use.
package failpoint

import (
	"context"
	"os"
)

// BeforePromptSent is the owner's point after a turn's turn_started and
// user_message are on disk and before its prompt_sent record and the
// session/prompt write: a process stopped here never sent the prompt.
const BeforePromptSent = "before-prompt-sent"

// BeforeContinuation is the owner's point after it planned the one
// follow-up of an interrupted turn (its continuation, or its message again)
// and before that follow-up's turn is written: a process stopped here sent
// nothing, so the next owner still owes the follow-up.
const BeforeContinuation = "before-continuation"

// The points of a keyed prompt's delivery (kandev prompt --key): before its
// input is queued, after it is queued and before any owner runs it, and
// after its turn ended and before the command printed its end.
const (
	BeforeKeyQueued = "before-key-queued"
	AfterKeyQueued  = "after-key-queued"
	AfterKeyedTurn  = "after-keyed-turn"
)

// Wait blocks until ctx ends when KANDEV_FAILPOINT is name; otherwise it
// returns at once. When KANDEV_FAILPOINT_FILE names a file, Wait creates it
// on arrival, so a test knows the process is there.
func Wait(ctx context.Context, name string) {
	if os.Getenv("KANDEV_FAILPOINT") != name {
		return
	}
	if p := os.Getenv("KANDEV_FAILPOINT_FILE"); p != "" {
		_ = os.WriteFile(p, []byte(name), 0o600)
	}
	<-ctx.Done()
}

// AfterPushAccepted is a push's point after the remote took the update and
// before this machine records it: the two sides disagree on what was synced.
const AfterPushAccepted = "after-push-accepted"

// AfterPullAppended is a pull's point after the pulled lines are appended
// to the local log and before the record and the sync file are written.
const AfterPullAppended = "after-pull-appended"

// TrustShown is kandev trust's point after it printed the servers and
// before it records that this machine trusts them.
const TrustShown = "trust-shown"

// PullChecked is a pull's point after the remote's log and record passed
// their checks and before anything of them is written.
const PullChecked = "pull-checked"

// ClaimTakenForFailedTurn is an owner's point after its turn failed and
// before it releases the claim it took for that turn.
const ClaimTakenForFailedTurn = "claim-taken-for-failed-turn"

// AgentSwitchRecorded is kandev switch's point after the record names the
// new agent and before the agent_switched event is in the log: a process
// stopped here leaves the session on the new agent, and the next command
// that owns it writes the event.
const AgentSwitchRecorded = "agent-switch-recorded"

// AfterInputQueued is a following command's point after its prompt is in
// the inbox and before it reads the log: the owner may take the prompt
// (join it to the running turn, with --steer) before the command has read
// a line, and a Ctrl-C here must still cancel the turn it joined.
const AfterInputQueued = "after-input-queued"
