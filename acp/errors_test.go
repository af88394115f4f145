package acp

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// The answers real agents give when the session asked for is gone. Each
// must let the restore ladder fall back to a fresh session: retrying them
// can never succeed.
func TestClassify_SessionGoneAnswersAreUnknownSession(t *testing.T) {
	cases := []struct {
		agent string
		err   *sdk.RequestError
	}{
		{"codex-acp", &sdk.RequestError{Code: -32002, Message: "Resource not found: session 0199"}},
		{"claude-agent-acp", &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Session not found"}}},
		{"gemini, stored conversation overwritten by a same-minute load", &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "No previous sessions found for this project."}}},
		{"gemini, id it does not know", &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Invalid session identifier \"12a9c562-5486\".\n  Searched for sessions in /h/.gemini/tmp/p/chats.\n  Use --list-sessions to see available sessions."}}},
		{"opencode storage", &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Resource not found: /h/.local/share/opencode/storage/session/ses_1.json"}}},
		{"an id named in the answer", &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "Session ses_4a1b-9 not found"}}},
		{"a quoted id that does not exist", &sdk.RequestError{Code: -32602, Message: "Invalid params: session \"abc\" does not exist"}},
		{"unknown session in the message", &sdk.RequestError{Code: -32602, Message: "Invalid params: unknown session abc"}},
		{"no such session", &sdk.RequestError{Code: -32603, Message: "no such session: abc"}},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			if got := Classify(tc.err); got != ClassUnknownSession {
				t.Fatalf("Classify(%v) = %s, want %s", tc.err, got, ClassUnknownSession)
			}
			step := NextRestoreStep(LadderInput{Caps: Capabilities{Load: true}, HasToken: true, NativeResume: true, Prev: RestoreLoad, PrevErr: Classify(tc.err)})
			if step != RestoreNew {
				t.Fatalf("after a load answered %v the ladder goes %s, want new", tc.err, step)
			}
		})
	}
}

// Failures that say nothing about the session keep the token: the user can
// retry them.
func TestClassify_OtherFailuresNamingASessionAreNotUnknownSession(t *testing.T) {
	for _, err := range []*sdk.RequestError{
		{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "session/load failed: model not found"}},
		{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Failed to find session \"x\": EACCES: permission denied"}},
		{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "could not save session: disk full"}},
	} {
		if got := Classify(err); got == ClassUnknownSession {
			t.Errorf("Classify(%v) = %s: a retryable failure would drop the session", err, got)
		}
	}
}

func TestDescribeError_ShowsTheAgentsDetailOfAnInternalError(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "No previous sessions found for this project."}}, "-32603 Internal error: No previous sessions found for this project."},
		{&sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "line one\n  line two"}}, "-32603 Internal error: line one line two"},
		{&sdk.RequestError{Code: -32002, Message: "Resource not found: session x", Data: "Resource not found: session x"}, "-32002 Resource not found: session x"},
		{&sdk.RequestError{Code: -32601, Message: "Method not found"}, "-32601 Method not found"},
		{&AgentExitError{Desc: "exited with status 1"}, (&AgentExitError{Desc: "exited with status 1"}).Error()},
	}
	for _, tc := range cases {
		if got := DescribeError(tc.err); got != tc.want {
			t.Errorf("DescribeError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestInWords_AnAgentsErrorIsSaidInWordsAndStillFoundByKind(t *testing.T) {
	re := sdk.NewInternalError(map[string]any{"details": "session not found"})
	err := inWords(fmt.Errorf("session/resume: %w", re))
	if strings.Contains(err.Error(), "{") || !strings.Contains(err.Error(), "-32603 Internal error: session not found") {
		t.Fatalf("said as %q", err.Error())
	}
	var got *sdk.RequestError
	if !errors.As(err, &got) || got.Code != -32603 {
		t.Fatal("the agent's error is no longer found by errors.As")
	}
	if inWords(err) != err || inWords(nil) != nil {
		t.Fatal("inWords wraps twice or wraps nothing")
	}
	plain := errors.New("plain")
	if inWords(plain) != plain {
		t.Fatal("an error that is not the agent's answer was wrapped")
	}
}
