package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// QueuedChoices are the choices of a command whose prompt may be queued for
// a live owner, beyond its permission mode (which every queued prompt
// carries): the owner applies them when it serves that prompt.
type QueuedChoices struct {
	// Linger is the sender's --linger when it gave one (nil: the owner
	// keeps its own).
	Linger *time.Duration
	// Steer: the prompt is for the turn the owner runs when it arrives
	// (kandev prompt --steer), where the agent steers (steer.go).
	Steer bool
}

// PromptInput is the inbox entry of job's prompt: the text and the
// sender's choices that its turn runs under.
func PromptInput(job Job) *state.Input {
	in := &state.Input{Kind: state.InputPrompt, Text: job.Prompt, Permissions: job.Permissions, Ask: askerOf(job), Steer: job.Queued.Steer}
	if d := job.Queued.Linger; d != nil {
		secs := int64(*d / time.Second)
		in.LingerSeconds = &secs
	}
	return in
}

// callerCanAsk reports whether job's command asks its person about the
// requests of its turn that an owner in another process parks for it.
func callerCanAsk(job Job) bool { return job.Permissions == PermAsk && job.AskParked != nil }

// askerOf is the asker a prompt of job's command names (nil: it cannot ask).
func askerOf(job Job) *state.Asker {
	if !callerCanAsk(job) {
		return nil
	}
	return state.ThisAsker()
}

// InputMode is the permission mode the turn serving in runs under: the
// mode its sender ran with, else (an input written before inputs carried
// it) the owner's.
func InputMode(in state.Input, ownerMode string) string {
	if ValidPermissionMode(in.Permissions) {
		return in.Permissions
	}
	return ownerMode
}

// InputLinger is how long the owner lingers once it has served in, given
// its current linger: a sender's --linger replaces it (0 included: the
// owner exits once the inbox is empty). Only a detached owner lingers for
// its senders; a foreground one keeps its own (senders are refused
// beforehand, LingerRefusal).
func InputLinger(in state.Input, current time.Duration, detached bool) time.Duration {
	if in.LingerSeconds == nil || !detached {
		return current
	}
	return time.Duration(*in.LingerSeconds) * time.Second
}

// LingerRefusal is why a prompt with an explicit --linger cannot be queued
// for the live owner of s: one that runs in the foreground of another
// command cannot linger for it ("" when it can be queued).
func LingerRefusal(s *state.Session, lingerGiven bool) string {
	if !lingerGiven || s.OwnerDetached {
		return ""
	}
	return fmt.Sprintf("session %s is run by a kandev command in the foreground (pid %d), which cannot linger for you: send the prompt without --linger, or once that command has ended", s.ID, s.OwnerPID)
}

// reconcileInbox skips a queued input whose turn already started before the
// previous owner died: inputs are served in order, so only the oldest
// pending one can have started, and only as the newest turn of the log.
//
// Control requests left at the head of the inbox targeted the previous
// owner's turn: they are consumed here (a stop still marks the session stopped).
func (o *owner) reconcileInbox(ins []state.Input) {
	if !o.taken {
		o.update(func(s *state.Session) { newOwner(s, o.job.Detached) })
	}
	for len(ins) > 0 && ins[0].Kind != state.InputPrompt {
		if ins[0].Kind == state.InputStop {
			o.update(func(s *state.Session) { s.Stopped = true })
		}
		if ins[0].Kind == state.InputSet {
			o.recordSet(ins[0]) // owner_setup.go: the restore applies it
		}
		o.consume(ins[0])
		ins = ins[1:]
	}
	if len(ins) == 0 {
		return
	}
	started := ""
	_, _ = eventlog.ScanBackward(o.job.Home.LogPath(o.s.ID), func(_ int64, line []byte) bool {
		var e eventlog.Event
		if json.Unmarshal(line, &e) == nil && e.Type == eventlog.EventTurnStarted {
			started = e.InputID
			return false
		}
		return true
	})
	if started == ins[0].ID {
		o.consume(ins[0])
	}
}

// stopQueued reports a kandev stop among the control inputs at the head of
// the inbox (those reconcileInbox consumes).
func stopQueued(ins []state.Input) bool {
	for _, in := range ins {
		if in.Kind == state.InputPrompt {
			return false
		}
		if in.Kind == state.InputStop {
			return true
		}
	}
	return false
}

// consume marks inbox input in as served; a prompt's text is then
// scrubbed from the inbox (the log has it, redacted).
func (o *owner) consume(in state.Input) {
	o.update(func(s *state.Session) {
		if in.Offset > s.InboxOffset {
			s.InboxOffset = in.Offset
			s.InboxServed++
		}
	})
	if err := o.job.Home.ScrubInput(o.s.ID, in); err != nil {
		o.failWrite("the inbox of session "+o.s.ID, err)
	}
}

// ownQueued reports whether the prompt this process queued itself is
// among the inputs still to serve: the caller's own prompt, which lifts a
// pause as a prompt given here does.
func ownQueued(ins []state.Input, own string) bool {
	for _, in := range ins {
		if own != "" && in.ID == own && in.Kind == state.InputPrompt {
			return true
		}
	}
	return false
}

// serveInput runs the turn of queued prompt in under its sender's
// choices: its permission mode (recorded, for a continuation of it) and,
// once served, its --linger.
func (o *owner) serveInput(ctx context.Context, in state.Input) error {
	mode := InputMode(in, o.job.Permissions)
	o.mu.Lock()
	o.turnMode, o.turnInput, o.turnAsker = mode, in.ID, in.Ask
	o.mu.Unlock()
	if o.session().TurnPermissionMode != mode {
		o.update(func(s *state.Session) { s.TurnPermissionMode = mode })
	}
	defer func() {
		o.mu.Lock()
		o.turnMode, o.turnInput, o.turnAsker = "", "", nil
		o.mu.Unlock()
	}()
	if in.Unattended {
		// Nobody follows it (prompt --no-follow): it waits before the
		// agent's limit, and counts as unattended work (window.go).
		if err := o.unattendedTurn(); err != nil {
			return err
		}
	}
	o.takeOverPause() // the operator's prompt, as one given here
	source := eventlog.SourceQueued
	if o.job.Detached && in.ID == o.job.OwnInput {
		// The prompt of the command that started this owner: its own turn,
		// as when that command owns the session itself.
		source = eventlog.SourceUser
	}
	err := o.turnFor(ctx, source, in.Text, &in)
	o.job.Linger = InputLinger(in, o.job.Linger, o.job.Detached)
	return err
}

// turnPermissions is the permission mode of the running turn.
func (o *owner) turnPermissions() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.turnMode != "" {
		return o.turnMode
	}
	return o.job.Permissions
}

// callerAsks is who asks about the running turn's requests under ask, when
// they are parked for the command that sent it (nil when they are not): a
// queued prompt's sender with a terminal, or the command that started this
// detached owner, for its own turns.
func (o *owner) callerAsks() *state.Asker {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.turnMode != "" {
		return o.turnAsker
	}
	return o.job.Asker
}

// agentAlive reports whether the owner's agent process still runs.
func (o *owner) agentAlive() bool {
	if o.proc == nil {
		return false
	}
	select {
	case <-o.proc.Done():
		return false
	default:
		return true
	}
}

// agentGone records that the agent died while the owner had no turn for
// it: the owner exits instead of serving prompts to a dead agent, and the
// next prompt restores it.
func (o *owner) agentGone() {
	o.marker(history.MarkerAgentFailure, fmt.Sprintf("The agent process exited while the session was idle (%s); the owner exits and the next prompt restores the agent.", o.proc.ExitDescription()), o.proc.Stderr())
}

// serveInbox runs the queued prompts in arrival order until the inbox is
// empty, so no queued input is stranded when the owner exits.
func (o *owner) serveInbox(ctx context.Context) error {
	for {
		ins, err := o.job.Home.ReadInbox(o.s.ID, o.s.InboxOffset)
		if err != nil {
			return err
		}
		if len(ins) == 0 {
			return nil
		}
		for i := range ins {
			in := ins[i]
			switch in.Kind {
			case state.InputPrompt:
				if o.s.Stopped {
					o.update(func(s *state.Session) { s.Stopped = false })
				}
				if !o.agentAlive() {
					// Never a prompt to a dead agent: the owner exits, and the
					// next one (a follower, or kandev __serve) restores it.
					o.agentGone()
					return nil
				}
				others := in.ID != o.job.OwnInput
				o.muted.Store(others)
				err := o.serveInput(ctx, in)
				o.muted.Store(false)
				if others && errors.Is(err, ErrAgentFailed) {
					// Not this command's failure: its sender sees it. The next
					// input is served as usual: to this agent while it lives,
					// else by the next owner (handOver).
					o.warn(fmt.Sprintf("a prompt queued by another kandev process (%s) failed: %v (its sender reports it too)", in.ID, err))
					continue
				}
				if err != nil {
					return err
				}
			case state.InputSet:
				o.serveSet(ctx, in) // owner_setup.go
			case state.InputClose:
				// Inputs queued behind a close wait for their senders, who take over.
				o.consume(in)
				o.closing = true
				return nil
			case state.InputStop:
				if !o.acted[in.ID] {
					o.update(func(s *state.Session) { s.Stopped = true })
				}
				o.consume(in)
			default: // a cancel with no turn to cancel, or of a child that outlived its turn
				if in.Child != "" && !o.acted[in.ID] {
					o.cancelChild(in) // children.go
				}
				o.consume(in)
			}
		}
	}
}

// controlRequested reports a cancel, stop or close --now queued since the current turn
// began that has not been acted on yet (Kind "" when none).
func (o *owner) controlRequested() state.Input {
	// Runs while the turn's updates may change the record: read it locked.
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return state.Input{}
	}
	if o.acted == nil {
		o.acted = map[string]bool{}
	}
	for _, in := range ins {
		now := in.Kind == state.InputCancel || in.Kind == state.InputStop || in.Kind == state.InputClose && in.Now
		if !ControlApplies(in, o.servedInput(), o.currentTurn(), o.followingUp()) {
			continue // a cancel of another turn (queued behind this one, or over)
		}
		if now && !o.acted[in.ID] {
			o.acted[in.ID] = true
			return in
		}
	}
	return state.Input{}
}

// ControlApplies reports whether control request in (a cancel, stop or
// close) is for the running turn, which serves inbox input input ("" for
// none), has id turn, and follows up interrupted turn followsUp ("" when it
// is no follow-up): one that names another input or turn (a follower's
// Ctrl-C of a prompt queued behind this turn, or of a turn already over)
// waits for its own.
func ControlApplies(in state.Input, input, turn, followsUp string) bool {
	return (in.ForInput == "" || in.ForInput == input) && (in.ForTurn == "" || in.ForTurn == turn) &&
		(in.ForFollowUpOf == "" || in.ForFollowUpOf == followsUp)
}

// cancelledWhileQueued reports a cancel that names the input the turn
// serves, or the interrupted turn it follows up, queued before its prompt
// was sent: its sender (or the resume that follows it) pressed Ctrl-C while
// it waited, so the message is not sent at all.
func (o *owner) cancelledWhileQueued() bool {
	input, followsUp := o.servedInput(), o.followingUp()
	if input == "" && followsUp == "" {
		return false
	}
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return false
	}
	if o.acted == nil {
		o.acted = map[string]bool{}
	}
	for _, in := range ins {
		mine := input != "" && in.ForInput == input || followsUp != "" && in.ForFollowUpOf == followsUp
		if in.Kind == state.InputCancel && mine && !o.acted[in.ID] {
			o.acted[in.ID] = true
			return true
		}
	}
	return false
}

// followingUp is the interrupted turn the running turn follows up ("" for none).
func (o *owner) followingUp() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.followsUp
}

// servedInput is the inbox input the running turn serves ("" for none).
func (o *owner) servedInput() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.turnInput
}

// warn reports a failure that is not the command's own.
func (o *owner) warn(msg string) {
	if o.job.Warn != nil {
		o.job.Warn(msg)
	}
}
