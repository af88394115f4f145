package owner

import (
	"context"
	"time"

	"github.com/kandev/kandev/state"
)

// Reach is where the owner a command talks to runs, and so what the
// command does next. It is decided in one place, DecideReach, from data
// only; the command then talks to that owner the same way wherever it runs
// (its events, asks, Ctrl-C and SIGTERM: follower.go).
type Reach string

const (
	// ReachHere: this process owns the session (run).
	ReachHere Reach = "here"
	// ReachDetached: start a detached owner that outlives the command
	// (__serve) and follow it.
	ReachDetached Reach = "detached"
	// ReachJoin: a live owner holds the session: queue for it and follow.
	ReachJoin Reach = "join"
	// ReachLeave: the command was interrupted while following: hand the
	// turn back to its owner as the signal says (leaveTurn).
	ReachLeave Reach = "leave"
	// ReachDone: the detached owner did all the command followed and exited.
	ReachDone Reach = "done"
	// ReachFailed: the command reports a failure instead of reaching an
	// owner: the detached owner exited with the failure it recorded, or an
	// answer finds no live owner holding its request.
	ReachFailed Reach = "failed"
)

// Follows is what a command follows in its owner.
type Follows int

const (
	// FollowsInput: the turn that serves one queued input (prompt, a keyed
	// prompt or a keyed start run again).
	FollowsInput Follows = iota
	// FollowsFirstTurn: a new session's start-up and initial turn (start).
	FollowsFirstTurn
	// FollowsRestore: a restore and what it serves (resume).
	FollowsRestore
	// FollowsServe: this process is the owner and follows its own run to
	// the end (the detached owner, kandev __serve; the editor's local
	// owner): it restores, serves what waits and lingers.
	FollowsServe
	// FollowsQueue: inputs the command queued itself must have an owner
	// serve them; the command follows nothing (attach's typed prompts).
	FollowsQueue
	// FollowsAnswer: an answer to a parked request (approve, deny, answer),
	// followed until the live owner has resolved that request.
	FollowsAnswer
	// FollowsControl: a control request for the live owner (cancel, stop,
	// close, an answer typed on attach), followed no further: sent only
	// when such an owner holds the session.
	FollowsControl
)

// EarlyExit is what a detached owner this command started left behind when
// it exited before what the command follows ended.
type EarlyExit struct {
	// Restored: it started the agent (agent_started) and stopped it again:
	// with no linger, a restore ends that way once it served what waited.
	Restored bool
	// Failure is the error it recorded ("" when none).
	Failure string
}

// ReachFacts are the facts DecideReach decides from.
type ReachFacts struct {
	// Linger is how long the owner stays after its last turn (0: --linger 0,
	// or $CI); a lingering owner must outlive the command.
	Linger time.Duration
	// Defers: permission mode defer, whose parked turn outlives the command.
	Defers bool
	// Interactive: the command reads prompts on its own terminal (resume -i).
	Interactive bool
	// OwnerAlive: a live owner holds the session's owner lock.
	OwnerAlive bool
	// Interrupted: the command got Ctrl-C or SIGTERM while it followed.
	Interrupted bool
	// Follows is what the command follows.
	Follows Follows
	// Early is set when the detached owner this command started exited
	// before what it follows ended.
	Early *EarlyExit
}

// reachNow probes job's session's owner lock and decides where the
// command's owner runs now: DecideReach from the job's facts. A job with no
// detached owner's command line (job.Detach nil) runs its owner here, as
// DecideReach chose for it: its facts carry no linger. started: this
// command already started a detached owner, so one that is not alive now
// exited early.
func reachNow(job Job, follows Follows, started bool) Reach {
	alive, _ := job.Home.OwnerAlive(job.SessionID)
	f := ReachFacts{Follows: follows, OwnerAlive: alive}
	if job.Detach != nil {
		f.Linger, f.Defers = job.Linger, job.Permissions == PermDefer
	}
	if started && !alive {
		f.Early = &EarlyExit{}
	}
	return DecideReach(f)
}

// DecideReach decides where the command's owner runs. A detached owner
// that exits early is one case here: the command runs the owner itself,
// where the reason is shown, unless the exit was a finished restore or a
// first start whose failure is on record.
func DecideReach(f ReachFacts) Reach {
	switch {
	case f.Follows == FollowsServe:
		return ReachHere // it is the owner
	case f.Interrupted:
		return ReachLeave
	case f.Early != nil && f.Follows == FollowsRestore && f.Early.Restored:
		return ReachDone
	case f.Early != nil && f.Follows == FollowsFirstTurn && f.Early.Failure != "":
		return ReachFailed
	case f.Early != nil:
		return ReachHere
	case f.OwnerAlive:
		return ReachJoin
	case f.Follows == FollowsAnswer || f.Follows == FollowsControl:
		return ReachFailed // nobody holds the request any more: the answer applies to nothing
	case f.Follows == FollowsQueue:
		return ReachDetached // nobody may follow what it queued: an owner that outlives it serves it
	case f.Interactive:
		return ReachHere
	case f.Linger > 0 || f.Defers:
		return ReachDetached
	}
	return ReachHere
}

// Request is what a command asks of its session's owner.
type Request struct {
	// Follows is what the command follows: a queued prompt's turn, a new
	// session's first turn, or a restore.
	Follows Follows
	// Key sends the prompt at most once per session and key (prompt --key);
	// with FollowsFirstTurn, the first turn of the session an earlier start
	// with that key created is followed (or printed) again.
	Key string
	// NoFollow only queues the prompt when another process owns the
	// session (prompt --no-follow).
	NoFollow bool
	// HasPrompt: the first turn runs an initial prompt (start "...").
	HasPrompt bool
	// Answer, with FollowsAnswer, is the approve, deny or answer input
	// naming a parked request; AnswerFrom is the log's size before the
	// caller read the request, so its resolution is seen from there.
	Answer     *state.Input
	AnswerFrom int64
	// Control, with FollowsControl, is the request sent; IfTurn sends it
	// only while the owner runs a turn (kandev cancel).
	Control *state.Input
	IfTurn  bool
	// Queue, with FollowsQueue, is a prompt to queue before an owner is
	// made sure of (attach's typed prompts).
	Queue *state.Input
}

// Dial is the one way a command reaches its session's owner, as gopls's
// lsprpc dialer reaches its server, and the only exported way to get one
// going: where the owner runs (this process, a detached owner it starts, a
// live one it joins) is decided by DecideReach (job.Detach is set where it
// chose a detached owner; whether a live owner is joined is probed where it
// matters, reachNow); the command then sees the same events, asks, signals
// and exit codes wherever it runs.
func Dial(ctx context.Context, job Job, r Request) (*Delivery, error) {
	switch {
	case r.Follows == FollowsServe:
		res, err := serve(ctx, job)
		return &Delivery{Result: res}, err
	case r.Follows == FollowsQueue:
		return dialQueue(ctx, job, r)
	case r.Follows == FollowsControl:
		return dialControl(job, r)
	case r.Follows == FollowsAnswer:
		res, err := dialAnswer(ctx, job, r)
		return &Delivery{Resolution: res, Queued: true, InputID: r.Answer.ID}, err
	case r.Follows == FollowsInput && r.Key != "":
		return deliverOnce(ctx, job, r.Key, !r.NoFollow)
	case r.Follows == FollowsInput:
		return deliver(ctx, job, !r.NoFollow)
	}
	var res *Result
	var err error
	switch {
	case r.Follows == FollowsFirstTurn && r.Key != "":
		res, err = followInitial(ctx, job)
	case job.Detach == nil:
		res, err = run(ctx, job)
	case r.Follows == FollowsFirstTurn:
		res, err = followStart(ctx, job, r.HasPrompt)
	default:
		res, err = followResume(ctx, job)
	}
	return &Delivery{Result: res}, err
}
