package owner

import (
	"context"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// Steering (kandev prompt --steer): a prompt queued with Steer while a turn
// runs is added to that turn when the agent steers (acp.Conn.Steer), and
// logged as a user_message of the turn that names its input (source
// steer), so transcripts, replays and a --key retry find it there. Where
// the agent does not steer, or hands the message back (its turn was
// ending), the input stays queued and is served as the next turn. The
// message is logged once the agent took it: an owner killed in between
// leaves it queued, and the next owner sends it again as a turn of its own
// (a window of one append).

// steerTimeout bounds the wait for the agent's answer to a steer: the turn
// loop (and so a cancel) waits for it.
const steerTimeout = 5 * time.Second

// steerQueued adds the oldest steer input waiting in the inbox to the
// running turn, when the agent steers. Runs on the turn loop.
func (o *owner) steerQueued() {
	if o.conn == nil || !o.conn.OffersSteering() {
		return
	}
	s := o.session()
	ins, err := o.job.Home.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return
	}
	o.mu.Lock() // o.answered changes on the connection's goroutines
	in, ok := NextSteer(ins, o.answered, o.steerTried)
	o.mu.Unlock()
	if !ok {
		return
	}
	if o.steerTried == nil {
		o.steerTried = map[string]bool{}
	}
	turn := o.currentTurn()
	ctx, cancel := context.WithTimeout(context.Background(), steerTimeout)
	defer cancel()
	if _, err := o.conn.Steer(ctx, s.ResumeToken, in.Text); err != nil {
		o.steerTried[in.ID] = true // served as the next turn instead
		return
	}
	o.append(true, &eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turn, Role: "user", Content: in.Text, Source: eventlog.SourceSteer, InputID: in.ID, Key: in.Key})
	o.consume(in)
}

// NextSteer is the steer input that can join the running turn now: the
// first pending input, past only the request answers already taken
// (answered). Anything else before it (a prompt, a setup change, a
// control for another turn) is served first, in order, so a steer never
// overtakes it; one the agent did not take (tried) waits for its own turn.
func NextSteer(ins []state.Input, answered, tried map[string]bool) (state.Input, bool) {
	for i, in := range ins {
		if answered[in.ID] {
			continue
		}
		if in.Kind != state.InputPrompt || !in.Steer || tried[in.ID] || cancelQueued(ins[i+1:], in.ID) {
			return state.Input{}, false
		}
		return in, true
	}
	return state.Input{}, false
}

// cancelQueued reports a cancel of input id among ins: its sender pressed
// Ctrl-C while it waited, so it is not steered but dropped when served
// (cancelledWhileQueued).
func cancelQueued(ins []state.Input, id string) bool {
	for _, in := range ins {
		if in.Kind == state.InputCancel && in.ForInput == id {
			return true
		}
	}
	return false
}

// steeredInto reports whether e is inbox input id joining a running turn:
// a follower of that input follows that turn.
func steeredInto(e eventlog.Event, id string) bool {
	return id != "" && e.Type == eventlog.EventUserMessage && e.Source == eventlog.SourceSteer && e.InputID == id
}
