package owner

import (
	"context"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestRepairTurn_ATurnClosedBySIGTERMStillAwaitsItsContinuation(t *testing.T) {
	turn := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t1", Source: "user"},
		{Seq: 2, Type: eventlog.EventUserMessage, TurnID: "t1", Content: "build it"},
		{Seq: 3, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c1"},
		{Seq: 4, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c2"},
		{Seq: 5, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c1", ToolStatus: "completed"},
		{Seq: 6, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c2", ToolStatus: "unknown"},
	}
	cases := []struct {
		stop      string
		closed    bool
		unknownID string
	}{
		{eventlog.StopShutdown, true, "c2"},
		{eventlog.StopEndTurn, false, ""},
		{eventlog.StopCancelled, false, ""},
		{eventlog.StopUserCanceled, false, ""},
	}
	for _, tc := range cases {
		evs := append(turn[:6:6], eventlog.Event{Seq: 7, Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: tc.stop})
		tr := RepairTurn(evs, "t1", eventlog.StopShutdown)
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
