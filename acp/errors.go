package acp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/internal/version"
)

// Version is kandev's version, sent as clientInfo.
var Version = version.Get().Version

// ErrorClass is what the restore ladder needs to know about a failed request.
type ErrorClass string

// Error classes, from the JSON-RPC codes and the answers real agents give.
const (
	ClassNone           ErrorClass = ""
	ClassMethodNotFound ErrorClass = "method_not_found" // -32601
	ClassUnknownSession ErrorClass = "unknown_session"  // -32002 and "session not found" answers
	ClassAuth           ErrorClass = "auth_required"    // -32000
	ClassCancelled      ErrorClass = "cancelled"        // -32800, context cancelled
	ClassTimeout        ErrorClass = "timeout"
	ClassTransport      ErrorClass = "transport" // the agent died or its pipe broke
	ClassOther          ErrorClass = "other"
)

// Classify sorts an error from an ACP request into the class the restore
// ladder decides by. Only method-not-found and unknown-session may fall back
// to a fresh session; everything else keeps the saved token.
func Classify(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	var exit *AgentExitError
	if errors.As(err, &exit) || errors.Is(err, ErrProtocol) {
		return ClassTransport
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	if errors.Is(err, context.Canceled) {
		return ClassCancelled
	}
	var re *sdk.RequestError
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Message + " " + re.Error())
		switch {
		case re.Code == -32601:
			return ClassMethodNotFound
		case re.Code == -32002:
			return ClassUnknownSession
		case re.Code == -32000:
			return ClassAuth
		case re.Code == -32800:
			if strings.Contains(msg, "deadline") {
				return ClassTimeout
			}
			return ClassCancelled
		case strings.Contains(msg, "peer disconnected"):
			return ClassTransport
		case strings.Contains(msg, "deadline exceeded"):
			return ClassTimeout
		case unknownSessionText(msg):
			return ClassUnknownSession
		}
	}
	return ClassOther
}

// goneSessionAnswers are the "this session is gone" answers agents give
// with generic codes (-32603, -32602), lower-cased. A restore answered so
// can never succeed, so it must fall back to a fresh session rather than
// ask the user to retry. Gemini CLI says "No previous sessions found" once
// its stored conversation is gone (a load in the minute the session was
// created overwrites it) and "Invalid session identifier" for an id it
// does not know.
var goneSessionAnswers = []string{
	"session not found", "unknown session", "no such session", "session does not exist",
	"resource not found", "no session with id", "invalid session", "no previous sessions found",
}

// namedSessionMissing matches answers that name the missing session:
// `Session abc123 not found`, `session "x" does not exist`.
var namedSessionMissing = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`session(?: id)?:? ["']?[\w.-]+["']? (?:was )?(?:not found|does not exist)`)
})

// unknownSessionText recognises the "no such session" answers agents give
// with generic codes.
func unknownSessionText(msg string) bool {
	for _, s := range goneSessionAnswers {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return namedSessionMissing().MatchString(msg)
}

// DescribeError is an ACP error on one line for markers and messages: the
// code and message, and the agent's own detail when it gave one (agents put
// the real reason of a -32603 "Internal error" in its data).
func DescribeError(err error) string {
	if w, ok := err.(*agentAnswer); ok {
		err = w.err
	}
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	desc := fmt.Sprintf("%d %s", re.Code, re.Message)
	if d := errorDetail(re.Data); d != "" && !strings.Contains(desc, d) {
		desc += ": " + d
	}
	return desc
}

// errorDetail is the human part of an error's data: its details, error or
// message field, or the data itself when it is a string; on one line.
func errorDetail(data any) string {
	var s string
	switch d := data.(type) {
	case string:
		s = d
	case map[string]any:
		for _, k := range []string{"details", "error", "message"} {
			if v, ok := d[k].(string); ok && v != "" {
				s = v
				break
			}
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}

// agentAnswer is an error the agent answered with, said in words
// (DescribeError: "-32603 Internal error: details") where the SDK's own
// text is its JSON; errors.As still finds the *sdk.RequestError.
type agentAnswer struct{ err error }

func (e *agentAnswer) Error() string { return DescribeError(e.err) }
func (e *agentAnswer) Unwrap() error { return e.err }

// inWords wraps an error the agent answered with as agentAnswer; any
// other error is returned as it is.
func inWords(err error) error {
	var re *sdk.RequestError
	if err == nil || !errors.As(err, &re) {
		return err
	}
	if _, done := err.(*agentAnswer); done {
		return err
	}
	return &agentAnswer{err: err}
}
