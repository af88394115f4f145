package owner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/failpoint"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

// run is the owner's life in one place: take the owner lock, plan from
// the record and the log (NewPlan), repair an interrupted turn, launch the
// agent, restore its conversation, run the pending initial prompt, the
// continuation and the user's prompt, then stop the agent and release the
// lock. ctx ending means the user interrupted (Ctrl-C): the turn is
// cancelled with session/cancel, then the agent is killed after a bound.
func run(ctx context.Context, job Job) (_ *Result, err error) {
	if err := state.CheckPrompt(job.Prompt); err != nil {
		return nil, err // refused before the session is touched or the agent sees it
	}
	lock, err := job.Home.AcquireOwner(job.SessionID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// Nothing a remote brought runs (nor gets a variable expanded) before
	// this machine agrees: checked again here, under the owner lock, as the
	// record is first read and the new owner is written into it.
	locked, taken, err := takeOver(job)
	if errors.Is(err, setup.ErrTrustPending) || errors.Is(err, ErrNotResumable) {
		return nil, err
	}
	// A session that travels between machines is claimed before anything
	// is appended to it (package remote); a takeover stops this owner.
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	onLost := func() { lost(remote.ErrFenced) }
	claim, err := remote.ClaimTurns(ctx, job.Home, job.Config, job.SessionID, onLost)
	synced := claim != nil || err != nil // the claim may have brought a newer record
	// A remote that does not answer: no turn runs without the claim, unless
	// --offline says to run it on this machine's copy (and the log says so).
	offline := errors.Is(err, remote.ErrTimeout) && job.Offline
	if offline {
		claim, err = nil, nil
	}
	if err != nil {
		withdrawRefused(job)
		return nil, err
	}
	var o *owner
	defer func() { // the claim the owner holds last (a warm owner may take one later)
		if o != nil {
			claim = o.claim
		}
		err = releaseClaim(context.WithoutCancel(ctx), claim, job, err)
	}()
	s := locked
	if s == nil || synced {
		if s, taken, err = takeOver(job); err != nil {
			return nil, err
		}
	}
	if s.Limit != nil && s.Limit.Scheduled != nil && s.Limit.Scheduled.Pending {
		if _, err := SettleSchedule(job.Home, job.SessionID); err != nil {
			return nil, err
		}
		if s, err = job.Home.LoadSession(job.SessionID); err != nil {
			return nil, err
		}
	}
	if job, err = runnable(job, s); err != nil {
		return nil, err
	}
	o = &owner{job: job, s: s, res: &Result{started: true, inboxFrom: s.InboxOffset}, claim: claim, onLost: onLost, taken: taken}
	return o.lifetime(ctx, offline)
}

// lifetime is the owner's life once it holds the lock, the claim and the
// record: open the log, finish what a crash left pending, run the turns
// (o.run), then stop the agent and settle what the turns left; it returns
// the result with the first write error as the cause.
func (o *owner) lifetime(ctx context.Context, offline bool) (*Result, error) {
	log, torn, err := o.job.Home.OpenLog(o.s.ID, history.LogOptions)
	if err != nil {
		return nil, err
	}
	o.log = log
	defer func() { // the one open at the end (reopenLog may replace it)
		o.emitMu.Lock()
		defer o.emitMu.Unlock()
		o.logClosed = true // a hook that fails later is not logged (notify.go)
		o.log.Close()
	}()
	if err := FinishPending(o.job.Home, log, o.s); err != nil {
		return nil, err
	}
	if torn > 0 {
		o.marker(history.MarkerSessionRepaired, fmt.Sprintf("Truncated a torn last log line (%d bytes) left by a crash.", torn), "")
	}
	if offline {
		o.offline = true
		o.ranOffline()
	}
	err = o.run(ctx)
	if errors.Is(err, ErrInterrupted) {
		o.settleUserCancel()
	}
	o.shutdown(err == nil && ctx.Err() == nil)
	o.settleUsage()
	o.reportWake()
	o.res.Session = o.s
	if werr := o.storageErr(); werr != nil {
		// What was not written was not reported either; the write error is the cause.
		err = werr
	}
	if err == nil {
		err = o.ownCancelled
	}
	return o.res, err
}

// runnable is job as the record s, read under the owner lock (and the
// claim), lets it run: never a finished session, the agent the record names
// (switchedMeanwhile), and no MCP server a remote brought that this machine
// has not trusted.
func runnable(job Job, s *state.Session) (Job, error) {
	if state.IsTerminal(s.State) {
		return job, NotResumableState(s.ID, s.State)
	}
	job, err := switchedMeanwhile(job, s)
	if err != nil {
		return job, err
	}
	return job, setup.CheckTrust(s) // the claim may have brought a newer record, with servers not trusted here
}

// takeOver reads job's record under the owner lock and, in the same step
// (one read of the record), writes this owner into it (newOwner). A record
// a remote brought that this machine does not trust yet is neither written
// nor run (setup.CheckTrust), nor is a finished session's written. taken is
// false when that write did not happen (the home cannot be written):
// reconcileInbox writes it again and so reports the failure.
func takeOver(job Job) (s *state.Session, taken bool, err error) {
	s, err = job.Home.UpdateSession(job.SessionID, func(s *state.Session) error {
		if err := runsHere(s); err != nil {
			return err
		}
		if !state.IsTerminal(s.State) {
			newOwner(s, job.Detached)
		}
		return nil
	})
	if err == nil || errors.Is(err, setup.ErrTrustPending) || errors.Is(err, ErrNotResumable) {
		return s, err == nil, err
	}
	s, err = job.Home.LoadSession(job.SessionID)
	if err == nil {
		err = runsHere(s)
	}
	return s, false, err
}

// newOwner is what a new owner changes in the record of the session it
// takes: what the previous one parked, and its warmth, died with it.
func newOwner(s *state.Session, detached bool) {
	s.ParkedRequests, s.OwnerDetached, s.WarmUntil = nil, detached, nil
}

type owner struct {
	job  Job
	plan Plan
	s    *state.Session
	log  *eventlog.EventLog
	res  *Result
	proc acp.Transport
	conn *acp.Conn
	// taken: takeOver wrote this owner into the record (newOwner).
	taken bool
	// reattached: the agent was running when this owner connected to it
	// (reattach.go); it is neither launched nor restored.
	reattached bool
	// claim is this machine's claim on a session that travels (nil: none);
	// onLost stops the owner when another machine takes it over.
	claim  *remote.Turns
	onLost func()
	// offline: --offline runs this owner's turns without the claim.
	offline bool

	recMu sync.Mutex // orders update and session
	// pendingUsage holds the usage totals of reports in the log that the
	// record has yet to get, and usageFlush the timer that writes them;
	// under recMu (usage.go).
	pendingUsage  *state.Session
	usageFlush    *time.Timer
	usageFlushOff bool
	mu            sync.Mutex
	turnID        string
	accepted      bool // the agent has answered something in the current turn
	onAccept      func()
	onSent        func() // runs once the current turn's prompt_sent is on disk
	// droppedUnsent: a Ctrl-C ended a turn before its prompt was sent, and
	// a marker said so.
	droppedUnsent bool
	// personEnded: a person's kandev cancel, stop or close --now ended the
	// current turn; ownCancelled: it was this command's own prompt, whose
	// command then exits as a follower would (personCancelled).
	personEnded  bool
	ownCancelled error
	emitMu       sync.Mutex
	logClosed    bool                   // the log is closed: nothing more is written; under emitMu
	hookFailures map[string]bool        // the kinds of [notify] failure logged; under emitMu
	redactor     history.StreamRedactor // streamed text is redacted as assembled; under emitMu
	agentInfo    *sdk.Implementation
	agentCaps    sdk.AgentCapabilities
	acted        map[string]bool // control inputs already acted on
	kidsMu       sync.Mutex
	kids         map[string]bool // child id → it may still run, since the agent connected (children.go)
	steerTried   map[string]bool // steer inputs the agent did not take into a turn; the turn loop only
	// loggedCalls are the tool calls this run logged; recorder goroutine only.
	loggedCalls map[string]bool
	cancelled   atomic.Bool // the current turn is being cancelled
	muted       atomic.Bool // serving another process's queued input: not printed here
	closing     bool        // a close input was served: no more inputs, no linger
	// answered are the approve and deny inputs taken by deferred permission
	// requests, which run on the connection's goroutines; under mu.
	answered map[string]bool
	// turnMode is the permission mode of the running turn when it serves a
	// queued input that carries its sender's ("" is the job's); under mu.
	turnMode string
	// turnInput is the inbox input the running turn serves ("" for none);
	// turnAsks: its sender asks its person (Input.Ask).
	turnInput string
	turnAsker *state.Asker
	// followsUp is the interrupted turn the running turn follows up (its
	// continuation, or its message sent again; "" for none); under mu.
	followsUp string
	// lastResolved is the parked request resolved last, when, and in which
	// turn; under mu.
	lastResolved     string
	lastResolvedAt   time.Time
	lastResolvedTurn string
	// allowedRunTurn is the turn in which a non-read request was last allowed:
	// the agent may run commands in client terminals during it (TerminalAllowed).
	allowedRunTurn string
	// answerTurn and answerHead are the start of the current turn's answer,
	// for an agent that reports a usage limit as a message (answerLimit); under mu.
	answerTurn, answerHead string

	// wake is what an unattended wake did (window.go); under mu.
	wake wakeState

	errMu    sync.Mutex
	writeErr error // the first failed log or record write
}

// run carries out the plan: prepare, launch and restore, then the initial
// prompt, the interrupted turn's follow-up, the user's prompt, the inbox
// and the interactive prompts, in that order; then the linger.
func (o *owner) run(ctx context.Context) error {
	o.beginWake()
	if err := o.reattach(ctx); err != nil {
		return err
	}
	plan, err := o.prepare()
	if err != nil {
		return err
	}
	if err := o.holdBeforeLaunch(); err != nil { // window.go
		return err
	}
	if err := o.start(ctx); err != nil {
		return err
	}
	if plan.Initial != "" {
		if err := o.turn(ctx, eventlog.SourceInitial, plan.Initial); err != nil {
			return err
		}
		o.noteOwnCancel()
	}
	if err := o.followUp(ctx); err != nil {
		return err
	}
	if err := o.continueAfterLimit(ctx); err != nil {
		return err
	}
	if plan.Maintenance != "" {
		if err := o.turn(ctx, eventlog.SourceMaintenance, plan.Maintenance); err != nil {
			return err
		}
	}
	if plan.SendPrompt {
		o.takeOverPause()
		if err := o.turn(ctx, eventlog.SourceUser, o.job.Prompt); err != nil {
			return err
		}
		o.noteOwnCancel()
	}
	if err := o.serveInbox(ctx); err != nil {
		return err
	}
	if err := o.interactive(ctx); err != nil {
		return err
	}
	return o.linger(ctx)
}

// prepare reads the facts, plans, and does what the plan says must happen
// before the agent is launched: set a lagging record straight, repair the
// cut-off turn, drop stale control inputs and record the pause transitions.
// It refuses (ErrNotResumable) a broken worktree, and a pause unless the
// user sent a prompt.
func (o *owner) prepare() (Plan, error) {
	facts, inbox := o.readFacts()
	o.plan = NewPlan(PlanInput{
		Session: o.s, Facts: facts, Profile: o.job.Profile, Now: o.now(),
		Policy: ContinuationPolicy(o.job.Config, o.job.Profile.Command, o.job.Permissions, o.job.NoContinue),
		Prompt: o.job.Prompt, InitialPrompt: o.job.InitialPrompt, Maintenance: o.job.Maintenance,
		OwnQueued: ownQueued(inbox, o.job.OwnInput),
	})
	if o.job.Prompt != "" || ownQueued(inbox, o.job.OwnInput) {
		o.personHere() // window.go: a person's prompt ends the after-reset count
	}
	plan := o.plan
	if plan.SettleLaggingRecord {
		// A record that lagged behind a finished turn: nothing was cut off.
		o.update(func(s *state.Session) { s.State = state.StateWaitingForInput })
	}
	if plan.Repair {
		o.repairInterrupted(facts.Repair)
	}
	if plan.ForgetInitial {
		// An older kandev kept a first prompt the agent had been sent.
		o.update(func(s *state.Session) { s.InitialPrompt = "" })
		o.marker(history.MarkerSessionRepaired, "The first prompt was sent to the agent by an earlier run (turn "+facts.InitialTurnID+"); it is not sent again.", "")
	}
	o.reconcileInbox(inbox)
	if wt := facts.Worktree; wt != nil {
		o.updateChanged(func(s *state.Session) { w := *wt; s.Worktree = &w })
	}
	o.settlePause(plan.Continuation, facts.Worktree)
	if plan.NotResent != "" {
		m := history.NewMarker(history.MarkerPromptCancel, "The message of turn "+plan.Continuation.Turn+" never reached the agent and is not sent again: automatic continuation is off. Send it again with kandev prompt "+o.s.ID+" if it is still wanted: "+history.Clip(plan.NotResent, 200), "")
		m.TurnID = plan.Continuation.Turn
		o.append(true, &m)
	}
	if plan.Refusal != nil {
		return plan, plan.Refusal
	}
	o.updateChanged(func(s *state.Session) {
		if plan.Continuation.Drop {
			s.Interrupted = nil // switched off: repaired, never continued
		}
		// Every turn this owner runs runs under this mode.
		s.TurnPermissionMode = o.job.Permissions
	})
	return plan, nil
}

// readFacts reads what the plan needs from the log, the inbox and the
// worktree; the inbox inputs are returned for reconcileInbox.
func (o *owner) readFacts() (Facts, []state.Input) {
	var f Facts
	path := o.job.Home.LogPath(o.s.ID)
	var events []eventlog.Event
	if turn := o.s.CurrentTurn; turn != "" {
		events = TurnEvents(path, turn)
		f.Repair = RepairTurn(events, turn, eventlog.StopShutdown)
	}
	inbox, _ := o.job.Home.ReadInbox(o.s.ID, o.s.InboxOffset)
	f.StopQueued = stopQueued(inbox)
	if o.s.Worktree != nil {
		w := worktree.CheckWorktree(*o.s.Worktree)
		f.Worktree = &w
	}
	if turn := awaitingTurn(o.s, f); turn != "" {
		if turn != o.s.CurrentTurn {
			events = TurnEvents(path, turn)
		}
		f.AwaitingTurn, f.Awaiting = turn, DescribeTurn(events, turn)
	}
	if o.s.InitialPrompt != "" && o.s.CurrentTurn == "" && o.s.Turns > 0 {
		if turn := newestTurnOf(path, eventlog.SourceInitial); turn != "" {
			f.InitialTurnID, f.InitialTurn = turn, DescribeTurn(TurnEvents(path, turn), turn)
		}
	}
	return f, inbox
}

// followUp sends the plan's follow-up of the interrupted turn: its one
// continuation, or its message again when it never reached the agent.
func (o *owner) followUp(ctx context.Context) error {
	p := o.plan
	if p.FollowUp == FollowNothing {
		return nil
	}
	if err := o.unattendedFollowUp(); err != nil { // window.go
		return err
	}
	// The attempt counts now; the follow-up is recorded as the turn's one
	// once its prompt_sent is on disk (beginTurn): an owner killed before
	// that sent nothing, and the next owner still owes it.
	o.spendAttempt()
	failpoint.Wait(ctx, failpoint.BeforeContinuation)
	o.mu.Lock()
	o.followsUp = p.Continuation.Turn
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.followsUp = ""
		o.mu.Unlock()
	}()
	if p.FollowUp == FollowResend {
		return o.turn(ctx, p.Resend.Source, p.Resend.Text)
	}
	held := RequestHeld(o.res.Restore, o.conn.ReplayedUserMessages(), p.Request)
	return o.turn(ctx, eventlog.SourceContinuation, p.ContinuationPrompt(held, o.s.ID, o.job.Config.MaxReplayBytes()))
}
