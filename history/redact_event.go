package history

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/eventlog"
)

// LogOptions opens a session's log the way every writer of it does: each
// event redacted (RedactEvent) before it is written.
var LogOptions = eventlog.OpenLogOptions{Redact: RedactEvent}

// RedactEvent redacts the fields of e that carry display text: Content,
// Summary, Diagnostic, FallbackReason (an agent's error text), ToolName (a
// tool call's title, which agents fill with the command line), and the
// string values inside Input and Data. A string value whose JSON key names a
// secret ({"api_key": "..."}) is redacted whole. Identifiers (Seq, Type,
// SessionID, TurnID, ToolCallID, ...) are never touched, and the JSON
// structure, key order and numbers are kept byte for byte.
func RedactEvent(e *eventlog.Event) {
	e.Content = Redact(e.Content)
	e.ToolName = Redact(e.ToolName)
	e.Summary = Redact(e.Summary)
	e.Diagnostic = Redact(e.Diagnostic)
	e.FallbackReason = Redact(e.FallbackReason)
	e.Input = redactJSON(e.Input)
	e.Data = redactJSON(e.Data)
}

// redactJSON redacts the string values of a JSON document, leaving every other
// byte as it is. Text that is not valid JSON is redacted as plain text.
func redactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !mayHoldSecret(raw) {
		return raw
	}
	if !json.Valid(raw) {
		return json.RawMessage(Redact(string(raw)))
	}
	var out []byte
	last := 0
	underSecretKey := false
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			i++
			continue
		}
		end := endOfJSONString(raw, i)
		lit := raw[i:end]
		j := end
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		if j < len(raw) && raw[j] == ':' {
			underSecretKey = mayHoldSecret(lit) && isSecretKey(decodeJSONString(lit))
		} else if repl, changed := redactJSONString(lit, underSecretKey); changed {
			out = append(append(out, raw[last:i]...), repl...)
			last = end
		}
		i = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// endOfJSONString returns the index just after the string literal that starts
// at raw[i] (a valid document, so the literal is closed).
func endOfJSONString(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

func decodeJSONString(lit []byte) string {
	var s string
	_ = json.Unmarshal(lit, &s)
	return s
}

// redactJSONString returns the literal that replaces lit, if any.
func redactJSONString(lit []byte, underSecretKey bool) ([]byte, bool) {
	if !underSecretKey && !mayHoldSecret(lit) {
		return nil, false
	}
	v := decodeJSONString(lit)
	r := Redact(v)
	if underSecretKey && !isPlaceholder(v) {
		r = Redacted
	}
	if r == v {
		return nil, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r)
	return []byte(strings.TrimSuffix(b.String(), "\n")), true
}

// isSecretKey reports whether a JSON key names a secret ("api_key",
// "GITHUB_TOKEN"); keys with other characters (spaces, slashes) are prose.
func isSecretKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if !isKeyByte(key[i]) {
			return false
		}
	}
	return namesSecret(key)
}
