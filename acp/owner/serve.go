package owner

import (
	"context"
	"errors"

	"github.com/kandev/kandev/state"
)

// serveRounds bounds how often an owner that serves the session to its end
// starts over for inputs left queued when its agent died: each round
// serves at least one.
const serveRounds = 8

// serveRound is what such an owner knows when one of its runs ended.
type serveRound struct {
	// Detached: the owner is a detached one (kandev __serve), which nobody
	// follows; an owner with a caller (the editor's) leaves what remains
	// queued to that caller.
	Detached bool
	// Round counts the runs before this one (0: the first).
	Round int
	// Stopped: a signal ended the run.
	Stopped bool
	// Final: the run ended so that another changes nothing: another owner
	// holds the session, it is not resumable, or its files cannot be written.
	Final bool
	// Unknown: the record could not be read, before or after the run.
	Unknown bool
	// Pending: inputs are still queued.
	Pending bool
	// Served: the run served some (the inbox offset moved).
	Served bool
}

// nextServeRound decides whether the owner starts over: only a detached
// one, for inputs still queued after a run that served some (its agent
// died with more waiting, and nobody may follow them), at most serveRounds
// times.
func nextServeRound(f serveRound) bool {
	return f.Detached && !f.Stopped && !f.Final && !f.Unknown && f.Round < serveRounds && f.Pending && f.Served
}

// serve owns job's session here until it has nothing to serve and its
// linger ran out (the detached owner, the editor's local owner). When a
// detached owner's agent dies with inputs still queued, it restores the
// agent and serves them (nextServeRound).
func serve(ctx context.Context, job Job) (*Result, error) {
	h, id := job.Home, job.SessionID
	for round := 0; ; round++ {
		res, err := run(ctx, job)
		f := serveRound{Detached: job.Detached, Round: round, Stopped: ctx.Err() != nil,
			Final: errors.Is(err, state.ErrOwnerBusy) || errors.Is(err, ErrNotResumable) || errors.Is(err, ErrStorage)}
		after, lerr := h.LoadSession(id)
		f.Unknown = lerr != nil || res == nil || !res.started
		if !f.Unknown {
			f.Pending, f.Served = h.PendingInputs(after) > 0, after.InboxOffset != res.inboxFrom
		}
		if !nextServeRound(f) {
			return res, err
		}
		job.Prompt, job.InitialPrompt, job.OwnInput = "", "", ""
		// --offline was said for the first round's own turn: the inputs
		// left are other commands', run only with the claim.
		job.Offline = false
	}
}
