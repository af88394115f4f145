package owner

import (
	"context"
	"testing"

	"github.com/kandev/kandev/state"
)

func TestRepairTurn_ATurnClosedBySIGTERMStillAwaitsItsContinuation(t *testing.T) {
	turn := []state.Event{
		{Seq: 1, Type: state.EventTurnStarted, TurnID: "t1", Source: "user"},
		{Seq: 2, Type: state.EventUserMessage, TurnID: "t1", Content: "build it"},
		{Seq: 3, Type: state.EventToolCall, TurnID: "t1", ToolCallID: "c1"},
		{Seq: 4, Type: state.EventToolCall, TurnID: "t1", ToolCallID: "c2"},
		{Seq: 5, Type: state.EventToolResult, TurnID: "t1", ToolCallID: "c1", ToolStatus: "completed"},
		{Seq: 6, Type: state.EventToolResult, TurnID: "t1", ToolCallID: "c2", ToolStatus: "unknown"},
	}
	cases := []struct {
		stop      string
		closed    bool
		unknownID string
	}{
		{state.StopShutdown, true, "c2"},
		{state.StopEndTurn, false, ""},
		{state.StopCancelled, false, ""},
		{state.StopUserCanceled, false, ""},
	}
	for _, tc := range cases {
		evs := append(turn[:6:6], state.Event{Seq: 7, Type: state.EventTurnEnded, TurnID: "t1", StopReason: tc.stop})
		tr := RepairTurn(evs, "t1", state.StopShutdown)
		if tr.Fixes != nil || tr.ClosedByShutdown != tc.closed {
			t.Errorf("%s: fixes %v, closed by shutdown %v; want nothing to append, closed %v", tc.stop, tr.Fixes, tr.ClosedByShutdown, tc.closed)
		}
		if !tc.closed {
			continue
		}
		if !tr.Accepted || tr.UserText != "build it" || len(tr.UnknownCalls) != 1 || tr.UnknownCalls[0].ToolCallID != tc.unknownID {
			t.Errorf("%s: %+v", tc.stop, tr)
		}
	}
}

func TestInterruption_SaysWhetherTheCommandWasTerminatedOrInterrupted(t *testing.T) {
	cases := []struct {
		cause error
		want  error
	}{
		{ErrShutdown, ErrShutdown},
		{ErrInterrupted, ErrInterrupted},
		{nil, ErrInterrupted},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tc.cause)
		if got := interruption(ctx); got != tc.want {
			t.Errorf("cause %v: got %v, want %v", tc.cause, got, tc.want)
		}
	}
}
