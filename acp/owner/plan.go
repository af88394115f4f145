package owner

import (
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
	"github.com/kandev/kandev/verdict"
)

// Facts are what the owner reads from disk before it decides: the
// log's account of the interrupted turn, the head of the inbox and the
// worktree.
type Facts struct {
	// Repair is RepairTurn of the record's current turn (zero when none).
	Repair TurnRepair
	// AwaitingTurn and Awaiting are DescribeTurn of the turn that may be owed
	// its continuation (see awaitingTurn).
	AwaitingTurn string
	Awaiting     TurnInfo
	// InitialTurn is DescribeTurn of the newest turn that carried the initial
	// prompt, read only when the record still keeps that prompt outside a
	// running turn (an older kandev kept it until the agent answered).
	InitialTurnID string
	InitialTurn   TurnInfo
	// StopQueued is set when a kandev stop is left at the head of the inbox.
	StopQueued bool
	// Worktree is the session's worktree as checked now, nil when none.
	Worktree *worktree.Worktree
}

// PlanInput is everything the owner's plan depends on.
type PlanInput struct {
	Session *state.Session // the record as loaded
	Facts   Facts
	Policy  verdict.ContinuationPolicy // config, profile command, permission mode, --no-continue
	Profile acp.Profile
	// Prompt is the user's prompt ("" for none); InitialPrompt is the
	// initial prompt as typed ("" sends the record's copy).
	Prompt, InitialPrompt string
	// OwnQueued: the prompt of the command running this owner waits in the
	// inbox (a queued prompt it took over, or the one a detached owner was
	// started for); like Prompt, it lifts a pause.
	OwnQueued bool
	// Maintenance is the agent command a maintenance turn sends ("" for none).
	Maintenance string
	Now         time.Time
}

// FollowUp is what the owner sends for an interrupted turn.
type FollowUp string

// Follow-ups of an interrupted turn.
const (
	FollowNothing  FollowUp = ""
	FollowContinue FollowUp = "continue" // the one continuation prompt
	FollowResend   FollowUp = "resend"   // the message that never reached the agent, again
)

// Plan is what the owner does, decided before it launches the agent.
type Plan struct {
	// SettleLaggingRecord: the record says running but names no turn; it
	// lagged behind a finished turn and is set waiting.
	SettleLaggingRecord bool
	// Repair: the record's current turn was cut off; it is closed with
	// Facts.Repair before anything else.
	Repair bool
	// Continuation is state's continuation rule applied to the record as it
	// is after the repair (pause, cleared pause, drop, continue).
	Continuation verdict.ContinuationDecision
	// Refusal stops the owner before it launches the agent.
	Refusal *NotResumableError
	// FollowUp of the interrupted turn Continuation.Turn, and what it sends.
	FollowUp FollowUp
	Resend   Message // for FollowResend
	// Request and UnknownCalls make the continuation prompt, for
	// FollowContinue (ContinuationPrompt): the interrupted request as logged
	// and the tool calls whose outcome is unknown.
	Request      string
	UnknownCalls []eventlog.Event
	// UnknownChildren are the interrupted turn's children whose outcome is
	// unknown: the continuation names them.
	UnknownChildren []subagents.Child
	// NotResent is the message of an interrupted turn that never reached the
	// agent and is not sent again because automatic continuation is off
	// ("" for none): the owner says so.
	NotResent string
	// Initial is the initial prompt still to send ("" when none).
	Initial string
	// ForgetInitial: the record still keeps an initial prompt that an
	// earlier run sent to the agent (or cannot prove it did not); it is
	// dropped from the record, never sent again.
	ForgetInitial bool
	// Maintenance is sent as a maintenance turn after the follow-up, before
	// the user's prompt ("" for none).
	Maintenance string
	// SendPrompt: the user's prompt is sent after the follow-up.
	SendPrompt bool
	// UseFlag: the agent is relaunched with its resume flag first.
	UseFlag bool
	// FirstLaunch: no agent was ever launched for the session.
	FirstLaunch bool
	// SetupFresh: the agent about to start never ran this session (its
	// first launch, or the first after kandev switch), so what it does not
	// answer about the setup is not kept as the person's choice.
	SetupFresh bool
	// Ladder is the restore ladder's input without the capabilities, which
	// only the agent's initialize answer gives.
	Ladder acp.LadderInput
	// Turns and HistoryInjection decide the resume context after a restore.
	Turns            int
	HistoryInjection bool
}

// Message is a user message and the source its turn records.
type Message struct {
	Source, Text string
}

// NewPlan decides the owner's run from data alone: the record, what the
// log and the disk say, the configuration, the job and the clock. The
// continuation rule itself is verdict.DecideContinuation.
func NewPlan(in PlanInput) Plan {
	s := in.Session
	p := Plan{
		SettleLaggingRecord: s.State == state.StateRunning && s.CurrentTurn == "",
		Repair:              s.CurrentTurn != "",
		FirstLaunch:         !s.AgentLaunched,
		SetupFresh:          !s.AgentLaunched || s.AgentNew,
		SendPrompt:          in.Prompt != "",
		Maintenance:         in.Maintenance,
		Turns:               s.Turns,
		HistoryInjection:    in.Profile.HistoryInjection,
	}
	rec := expectedRecord(s, in.Facts)
	d := verdict.DecideContinuation(rec, in.Facts.Worktree, in.Policy, in.Now)
	p.Continuation = d
	p.Refusal = refusal(s.ID, in.Facts.Worktree, d, in.Prompt != "" || in.OwnQueued)
	if d.Continue {
		info := TurnInfo{}
		if in.Facts.AwaitingTurn == d.Turn {
			info = in.Facts.Awaiting
		}
		p.FollowUp, p.Resend = followUp(info)
		if p.FollowUp == FollowContinue {
			p.Request, p.UnknownCalls, p.UnknownChildren = info.Request(), info.UnknownCalls, info.UnknownChildren
		}
	}
	if d.Drop && in.Facts.AwaitingTurn == d.Turn && DecideDelivery(in.Facts.Awaiting) == PromptNeverSent {
		p.NotResent = in.Facts.Awaiting.UserText
	}
	if rec.InitialPrompt != "" && in.Facts.InitialTurn.Started && DecideDelivery(in.Facts.InitialTurn) != PromptNeverSent {
		p.ForgetInitial = true
	} else if rec.InitialPrompt != "" {
		// The record keeps the prompt redacted; the process that took it from
		// the user sends it as typed.
		p.Initial = rec.InitialPrompt
		if in.InitialPrompt != "" {
			p.Initial = in.InitialPrompt
		}
	}
	hasToken := s.ResumeToken != "" && !p.FirstLaunch
	p.UseFlag = len(in.Profile.ResumeFlag) > 0 && hasToken
	p.Ladder = acp.LadderInput{HasToken: hasToken, NativeResume: in.Profile.NativeResume}
	return p
}

// expectedRecord is the record as the owner leaves it after the repair and
// the inbox check, before the continuation rule reads it.
func expectedRecord(s *state.Session, f Facts) *state.Session {
	rec := *s
	if rec.State == state.StateRunning && rec.CurrentTurn == "" {
		rec.State = state.StateWaitingForInput
	}
	if rec.CurrentTurn != "" {
		closeInterruptedTurn(&rec, rec.CurrentTurn, f.Repair)
	}
	if f.StopQueued {
		rec.Stopped = true
	}
	if f.Worktree != nil {
		rec.Worktree = f.Worktree
	}
	return &rec
}

// awaitingTurn is the turn whose log the plan needs (Facts.Awaiting).
func awaitingTurn(s *state.Session, f Facts) string {
	turn, _ := expectedRecord(s, f).AwaitingContinuation()
	return turn
}

// closeInterruptedTurn is the record side of a repair of turn: the turn
// ends, and one its owner lost is owed its one follow-up: a continuation,
// or the message again when it never reached the agent.
func closeInterruptedTurn(s *state.Session, turn string, tr TurnRepair) {
	owed := true
	if tr.Fixes == nil {
		// Only the record lagged behind; a terminated owner closed the turn
		// but its record write was lost.
		owed = tr.ClosedByShutdown && s.Interrupted == nil
	} else {
		s.StopReason = eventlog.StopShutdown
	}
	ReleaseInitialPrompt(s, tr, owed)
	owed = owed && s.InitialPrompt == ""
	if owed {
		s.Interrupted = &state.Interruption{Turn: turn, PermissionOpen: tr.PermissionOpen || s.PermissionPending,
			Maintenance: tr.Source == eventlog.SourceMaintenance}
	}
	s.CurrentTurn = ""
	s.State = state.StateWaitingForInput
	s.PermissionPending = false
}

// ReleaseInitialPrompt is the record side of closing turn tr for its
// initial prompt: when tr carried it, the record stops keeping it once the
// turn is closed, if the prompt reached the agent (it is continued, never
// sent again) or the turn is owed its follow-up (which sends it again,
// within the continuation budget). A repair (package acp/surgery) closes
// turns by the same rule.
func ReleaseInitialPrompt(s *state.Session, tr TurnRepair, owed bool) {
	if tr.Source == eventlog.SourceInitial && (owed || tr.Delivery != PromptNeverSent) {
		s.InitialPrompt = ""
	}
}

// refusal is why the owner must not run: a broken worktree, or a pause
// that only an operator's prompt lifts.
func refusal(id string, wt *worktree.Worktree, d verdict.ContinuationDecision, prompted bool) *NotResumableError {
	switch {
	case wt != nil && !wt.Valid:
		return &NotResumableError{SessionID: id, Reason: wt.Problem, Advice: pauseAdvice(id, wt, state.PauseWorktree)}
	case d.Pause != nil && !prompted:
		return &NotResumableError{SessionID: id, Reason: "automatic continuation of session " + id + " is paused: " + d.Pause.Reason,
			Advice: pauseAdvice(id, wt, d.Pause.Kind)}
	}
	return nil
}

// PromptDelivery is what a turn's log says about whether its prompt reached the
// agent (see docs/resume.md, "sent or not").
type PromptDelivery string

// Deliveries of a turn's prompt.
const (
	// PromptWasSent: prompt_sent is in the log; the owner wrote the prompt
	// to the agent (or was about to: the record comes first).
	PromptWasSent PromptDelivery = "sent"
	// PromptNeverSent: the turn's owner records prompt_sent and did not: the
	// prompt never reached the agent.
	PromptNeverSent PromptDelivery = "unsent"
	// PromptUnproven: an older kandev wrote the turn without recording
	// sends, so nothing proves it unsent; it is treated as sent.
	PromptUnproven PromptDelivery = "unproven"
)

// DecideDelivery is the "sent or not" rule: a message is sent again only
// when the log proves it never reached the agent, which only a turn whose
// owner records prompt_sent can. Whether the agent answered anything plays
// no part: an agent may work on a prompt in silence.
func DecideDelivery(info TurnInfo) PromptDelivery {
	switch {
	case info.PromptSent:
		return PromptWasSent
	case info.SendRecorded:
		return PromptNeverSent
	}
	return PromptUnproven
}

// followUp decides between continuing an interrupted turn and sending its
// message again: only a message that never reached the agent is sent again;
// any other is continued, even when the agent had answered nothing.
func followUp(info TurnInfo) (FollowUp, Message) {
	if DecideDelivery(info) == PromptNeverSent && info.UserText != "" {
		source := info.Source
		switch {
		case info.Queued:
			// Sent again with no input id: those who follow that input know
			// its re-send as queued, whoever's own prompt it was.
			source = eventlog.SourceQueued
		case source == "" || source == eventlog.SourceInitial:
			source = eventlog.SourceUser
		}
		return FollowResend, Message{Source: source, Text: info.UserText}
	}
	return FollowContinue, Message{}
}

// ContinuationPrompt is the continuation of the interrupted turn: it quotes
// the interrupted request (bounded by maxBytes, like the resume context)
// unless the restored agent is shown to hold it (held, RequestHeld).
func (p Plan) ContinuationPrompt(held bool, sessionID string, maxBytes int) string {
	note := subagents.ContinuationNote(p.UnknownChildren)
	if note != "" {
		note = "\n\n" + note
	}
	if held {
		return history.BuildContinuationPrompt(p.UnknownCalls) + note
	}
	if maxBytes > len(note) {
		maxBytes -= len(note) // the whole prompt keeps the bound
	}
	return history.BuildContinuationPromptQuoting(p.UnknownCalls, p.Request, sessionID, maxBytes) + note
}

// RequestHeld says whether the restored agent is shown to hold request:
// only a session/load whose replay contains it shows that (replayed are the
// user messages of the replay). A session/resume, a resume flag or a fresh
// session shows nothing, whatever the agent may have kept.
func RequestHeld(step acp.RestoreMethod, replayed []string, request string) bool {
	request = strings.TrimSpace(request)
	if step != acp.RestoreLoad || request == "" {
		return false
	}
	for _, m := range replayed {
		if strings.Contains(m, request) {
			return true
		}
	}
	return false
}

// FirstStep is the first restore step once the agent advertised caps: its
// resume flag when the plan relaunches with it (and the agent did not
// refuse it), else the ladder's first rung.
func (p Plan) FirstStep(caps acp.Capabilities, flagRefused bool) acp.RestoreMethod {
	if p.UseFlag && !flagRefused {
		return acp.RestoreFlag
	}
	in := p.Ladder
	in.Caps = caps
	return acp.NextRestoreStep(in)
}

// OwesResumeContext says whether the next prompt must carry the resume
// context after the conversation was restored by step: a fresh agent
// session replacing one with history gets it, and so does every restore of
// a profile that asks for injection; an agent that refused its resume flag
// always gets it.
func (p Plan) OwesResumeContext(step acp.RestoreMethod, flagRefused bool) bool {
	if flagRefused {
		return true
	}
	switch step {
	case acp.RestoreNew, acp.RestoreFlag, acp.RestoreResume, acp.RestoreLoad:
		return !p.FirstLaunch && p.Turns > 0 && (step == acp.RestoreNew || p.HistoryInjection)
	}
	return false
}

// shouldInjectResumeContext says whether a turn from source sends the
// pending resume context: an initial prompt carries it only for a child of
// another session, and a maintenance turn (a compaction) never spends it:
// it stays for the next ordinary prompt.
func shouldInjectResumeContext(pending bool, source, parentID string) bool {
	switch source {
	case eventlog.SourceMaintenance:
		return false
	case eventlog.SourceInitial:
		return pending && parentID != ""
	}
	return pending
}
