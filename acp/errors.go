package acp

import (
	"context"
	"errors"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// Version is kandev's version, sent as clientInfo.
var Version = "0.1.0"

// ErrorClass is what the restore ladder needs to know about a failed request.
type ErrorClass string

// Error classes, from the JSON-RPC codes and the answers real agents give.
const (
	ErrNone           ErrorClass = ""
	ErrMethodNotFound ErrorClass = "method_not_found" // -32601
	ErrUnknownSession ErrorClass = "unknown_session"  // -32002 and "session not found" answers
	ErrAuth           ErrorClass = "auth_required"    // -32000
	ErrCancelled      ErrorClass = "cancelled"        // -32800, context cancelled
	ErrTimeout        ErrorClass = "timeout"
	ErrTransport      ErrorClass = "transport" // the agent died or its pipe broke
	ErrOther          ErrorClass = "other"
)

// Classify sorts an error from an ACP request into the class the restore
// ladder decides by. Only method-not-found and unknown-session may fall back
// to a fresh session; everything else keeps the saved token.
func Classify(err error) ErrorClass {
	if err == nil {
		return ErrNone
	}
	var exit *AgentExitError
	if errors.As(err, &exit) || errors.Is(err, ErrProtocol) {
		return ErrTransport
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout
	}
	if errors.Is(err, context.Canceled) {
		return ErrCancelled
	}
	var re *sdk.RequestError
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Message + " " + re.Error())
		switch {
		case re.Code == -32601:
			return ErrMethodNotFound
		case re.Code == -32002:
			return ErrUnknownSession
		case re.Code == -32000:
			return ErrAuth
		case re.Code == -32800:
			if strings.Contains(msg, "deadline") {
				return ErrTimeout
			}
			return ErrCancelled
		case strings.Contains(msg, "peer disconnected"):
			return ErrTransport
		case strings.Contains(msg, "deadline exceeded"):
			return ErrTimeout
		case unknownSessionText(msg):
			return ErrUnknownSession
		}
	}
	return ErrOther
}

// unknownSessionText recognises the "no such session" answers agents give
// with generic codes (-32603, -32602).
func unknownSessionText(msg string) bool {
	for _, s := range []string{"session not found", "unknown session", "no such session", "session does not exist", "resource not found", "no session with id", "invalid session"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
