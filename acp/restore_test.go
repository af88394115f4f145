package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestNextRestoreStep_Ladder(t *testing.T) {
	both := Capabilities{Resume: true, Load: true}
	cases := []struct {
		name string
		in   LadderInput
		want RestoreMethod
	}{
		{"resume when advertised with a token", LadderInput{Caps: both, HasToken: true, NativeResume: true}, RestoreResume},
		{"load when resume is not advertised", LadderInput{Caps: Capabilities{Load: true}, HasToken: true, NativeResume: true}, RestoreLoad},
		{"new when neither is advertised", LadderInput{HasToken: true, NativeResume: true}, RestoreNew},
		{"new without a token", LadderInput{Caps: both, NativeResume: true}, RestoreNew},
		{"profile forces native resume off", LadderInput{Caps: both, HasToken: true}, RestoreNew},
		{"resume method-not-found falls back to load", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassMethodNotFound}, RestoreLoad},
		{"resume method-not-found without load goes new", LadderInput{Caps: Capabilities{Resume: true}, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassMethodNotFound}, RestoreNew},
		{"resume unknown-session goes new", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassUnknownSession}, RestoreNew},
		{"resume transport failure keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassTransport}, RestoreFail},
		{"resume auth failure keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassAuth}, RestoreFail},
		{"resume timeout keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassTimeout}, RestoreFail},
		{"resume cancelled keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassCancelled}, RestoreFail},
		{"resume inconclusive error keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreResume, PrevErr: ClassOther}, RestoreFail},
		{"load unknown-session goes new", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreLoad, PrevErr: ClassUnknownSession}, RestoreNew},
		{"load method-not-found goes new", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreLoad, PrevErr: ClassMethodNotFound}, RestoreNew},
		{"load transport failure keeps the token", LadderInput{Caps: both, HasToken: true, NativeResume: true, Prev: RestoreLoad, PrevErr: ClassTransport}, RestoreFail},
		{"new failing fails", LadderInput{Caps: both, Prev: RestoreNew, PrevErr: ClassOther}, RestoreFail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextRestoreStep(tc.in); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestClassify_ErrorsFromRealAgents(t *testing.T) {
	cases := []struct {
		err  error
		want ErrorClass
	}{
		{sdk.NewMethodNotFound("session/resume"), ClassMethodNotFound},
		{&sdk.RequestError{Code: -32002, Message: "Resource not found: session x"}, ClassUnknownSession},
		{&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "Session not found"}}, ClassUnknownSession},
		{&sdk.RequestError{Code: -32602, Message: "Invalid params: unknown session abc"}, ClassUnknownSession},
		{sdk.NewAuthRequired(nil), ClassAuth},
		{sdk.NewRequestCancelled(nil), ClassCancelled},
		{sdk.NewInternalError(map[string]any{"error": "peer disconnected before response"}), ClassTransport},
		{&AgentExitError{Desc: "exited with status 1"}, ClassTransport},
		{sdk.NewInternalError(map[string]any{"error": "boom"}), ClassOther},
	}
	for _, tc := range cases {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}
