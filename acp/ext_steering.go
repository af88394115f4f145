package acp

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// _session/steering: the client adds a message to the turn the agent is
// running instead of queuing it as the next session/prompt (the ACP
// steering extension, version 1, as @agentclientprotocol/claude-agent-acp
// 0.101 and @agentclientprotocol/codex-acp 2.6 serve it: request
// {sessionId, prompt, _meta.steering.idleBehavior}, answer {outcome,
// reason}; advertised by the initialize answer's top-level
// _meta.steering.supported). It is an extension method ("_" prefix), so it
// goes through the SDK's CallExtension. kandev always asks for
// idleBehavior promptRequired: an agent with no turn running hands the
// message back, and kandev sends it as the next turn itself, so the log
// says which turn answered it (kandev prompt --steer, docs/commands.md).

// MethodSessionSteering is the method's name on the wire.
const MethodSessionSteering = "_session/steering"

// SteeringSchemaVersion is the version of the steering extension spoken here.
const SteeringSchemaVersion = 1

// SteerRequest is _session/steering's params.
type SteerRequest struct {
	SessionID string             `json:"sessionId"`
	Prompt    []sdk.ContentBlock `json:"prompt"`
	Meta      SteerRequestMeta   `json:"_meta"`
}

// SteerRequestMeta carries the client's steering choices.
type SteerRequestMeta struct {
	Steering SteerChoices `json:"steering"`
}

// SteerChoices: IdleBehavior "promptRequired" asks an idle agent to hand
// the message back (outcome promptRequired) rather than start a turn.
type SteerChoices struct {
	IdleBehavior string `json:"idleBehavior,omitempty"`
}

// SteerResponse is _session/steering's result.
type SteerResponse struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// Steering outcomes.
const (
	SteerInjected       = "injected"       // the message joined the running turn
	SteerPromptRequired = "promptRequired" // no turn runs: send it as a prompt
	SteerStartedNewTurn = "startedNewTurn" // an agent that ignored idleBehavior started a turn for it
	SteerFailed         = "failed"
)

// IdlePromptRequired is the idle behaviour kandev asks for.
const IdlePromptRequired = "promptRequired"

// ErrNotInjected says the agent did not add the message to a running turn.
var ErrNotInjected = errors.New("the agent did not take the message into its running turn")

// Steer adds text to the turn the agent runs for session token. It returns
// nil only when the agent took it into that turn (outcome injected);
// otherwise the message is still the caller's to send.
func (c *Conn) Steer(ctx context.Context, token, text string) (SteerResponse, error) {
	raw, err := c.sdk.CallExtension(ctx, MethodSessionSteering, SteerRequest{
		SessionID: token,
		Prompt:    []sdk.ContentBlock{sdk.TextBlock(text)},
		Meta:      SteerRequestMeta{Steering: SteerChoices{IdleBehavior: IdlePromptRequired}},
	})
	if err != nil {
		return SteerResponse{}, c.wrap(ctx, err)
	}
	var resp SteerResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, err
	}
	if resp.Outcome != SteerInjected {
		return resp, ErrNotInjected
	}
	return resp, nil
}

// OffersSteering reports whether the agent advertised steering in its
// initialize answer.
func (c *Conn) OffersSteering() bool { return c.offersSteer.Load() }

// steeringIn reads _meta.steering.supported off an initialize answer (the
// JSON-RPC line, or the recorded result).
func steeringIn(meta gjson.Result) bool {
	return meta.Get("steering.supported").Bool()
}

// SteeringAdvertised reports whether a recorded initialize answer (JSON of
// sdk.InitializeResponse) advertises steering.
func SteeringAdvertised(caps json.RawMessage) bool {
	return steeringIn(gjson.GetBytes(caps, "_meta"))
}
