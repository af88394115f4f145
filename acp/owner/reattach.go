package owner

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/state"
)

// reattach connects, before anything is planned, to an agent that may
// have kept running while no owner talked to it (Job.Outlives: a
// container's relay kept it). An agent an earlier owner had initialized is
// neither launched nor restored (start records restore "reattach"). When
// that owner died in a turn the agent still runs, this owner takes the
// turn over: what the agent wrote meanwhile is recorded from the relay's
// journal, its pending requests are answered, and the turn ends as the
// agent ends it, with no repair and no continuation. A new agent (its
// container was started again) is initialized and restored by start.
func (o *owner) reattach(ctx context.Context) error {
	if !o.job.Outlives || o.job.Launch == nil || !o.s.AgentLaunched {
		return nil
	}
	o.progress("connecting to the " + o.job.Profile.Name + " agent's container")
	proc, err := o.job.Launch(o.launchSpec(o.job.Profile.ResolvedCommand()))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAgentFailed, err)
	}
	initialized, prompt := false, ""
	if r, ok := proc.(acp.Reattachable); ok {
		initialized, prompt = r.Reattached()
	}
	turn := ""
	if initialized && o.s.CurrentTurn != "" && prompt != "" {
		// What the agent wrote meanwhile belongs to that turn: set before
		// the connection reads the first line of the journal.
		turn = o.s.CurrentTurn
		o.mu.Lock()
		o.turnID, o.accepted = turn, true
		o.mu.Unlock()
	}
	o.connect(proc)
	if !initialized {
		return nil
	}
	o.reattached = true
	var init sdk.InitializeResponse
	_ = json.Unmarshal(o.s.Capabilities, &init)
	o.agentInfo, o.agentCaps = init.AgentInfo, init.AgentCapabilities
	o.update(func(s *state.Session) { s.OwnerPID = ownPID })
	o.res.Restore = acp.RestoreReattach
	o.recordStarted(nil)
	if turn == "" {
		return nil
	}
	o.progress("reattached to turn " + turn + ", still running in the agent")
	done := make(chan promptAnswer, 1)
	go func() {
		stop, err := o.conn.AwaitPrompt(context.Background(), prompt)
		done <- promptAnswer{stop, err}
	}()
	stop, err := o.awaitTurnEnd(ctx, done)
	o.res.StopReason = stop
	o.endTurn(turn, stop, err)
	return err
}
