package acpconform

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// CheckAgentSide checks what the agent side of one conversation wrote (out)
// given what it read (in): every request, notification and answer it sent.
func (c *Checker) CheckAgentSide(in, out []byte) []Violation {
	vs, _ := c.checkAgentSide(in, out)
	return vs
}

// perKind is how many notifications of one kind (method and session update
// type) a conversation has checked against the schema; the rest get every
// other check. A /bulk turn sends 100,000 agent_message_chunk updates built
// by one function: validating each cost the suite a minute and a half.
const perKind = 500

// checkAgentSide is CheckAgentSide, and how many messages were validated
// against the schema.
func (c *Checker) checkAgentSide(in, out []byte) ([]Violation, int) {
	p := readPeer(in)
	p.seen = map[string]int{}
	var vs []Violation
	for i, l := range lines(out) {
		if problem := c.checkSent(p, l); problem != "" {
			vs = append(vs, Violation{Line: i + 1, Message: cut(string(l), 300), Problem: problem})
		}
	}
	return vs, p.validated
}

// checkSent is what is wrong with one message the agent side sent ("": nothing).
func (c *Checker) checkSent(p *peer, l []byte) string {
	if !json.Valid(l) {
		var v any
		return "not JSON: " + json.Unmarshal(l, &v).Error()
	}
	if gjson.GetBytes(l, "jsonrpc").Str != "2.0" {
		return `no "jsonrpc": "2.0"`
	}
	id, method := gjson.GetBytes(l, "id"), gjson.GetBytes(l, "method")
	switch {
	case method.Exists() && strings.HasPrefix(method.Str, "_"):
		return "" // an extension method: the protocol leaves its shape open
	case method.Exists():
		return c.checkCall(p, method.Str, id.Exists(), l)
	case id.Exists():
		return c.checkAnswer(p, id.Raw, l)
	}
	return "neither a request, a notification nor an answer"
}

// checkCall checks a request or notification the agent side sent.
func (c *Checker) checkCall(p *peer, method string, isRequest bool, l []byte) string {
	set, defs, ok := c.lookup(method)
	if !ok {
		return fmt.Sprintf("method %q is not in the published protocol", method)
	}
	if method != "$/cancel_request" && defs.side != "client" {
		return fmt.Sprintf("method %q is the client's to send, not the agent's", method)
	}
	if problem := p.allows(method); problem != "" {
		return problem
	}
	def := defs.msg
	if isRequest {
		def = defs.request
	}
	if def == "" {
		return fmt.Sprintf("%q sent as a %s", method, map[bool]string{true: "request", false: "notification"}[isRequest])
	}
	params := gjson.GetBytes(l, "params")
	if form := subagentForm(method, params); form != "" {
		// The subagents RFD's updates are in the unstable schema only, and
		// only for a client that declared clientCapabilities.subagents; the
		// RFD's earlier draft (which Claude's adapter still sends to some
		// clients) is in no schema.
		if !p.subagents {
			return "a subagent update sent to a client that did not declare clientCapabilities.subagents"
		}
		if form == "draft" {
			return ""
		}
		set = c.unstable
	}
	if p.toValidate(isRequest, method+"/"+params.Get("update.sessionUpdate").Str) {
		if err := set.validate(def, decode(params.Raw)); err != nil {
			return fmt.Sprintf("%s params do not validate: %v", method, err)
		}
	}
	return p.booleanLeak(params)
}

// checkAnswer checks an answer the agent side sent to request id.
func (c *Checker) checkAnswer(p *peer, id string, l []byte) string {
	if e := gjson.GetBytes(l, "error"); e.Exists() {
		p.validated++
		if err := c.stable.validate("Error", decode(e.Raw)); err != nil {
			return fmt.Sprintf("error does not validate: %v", err)
		}
		return ""
	}
	method, ok := p.methods[id]
	if !ok {
		return "an answer to no request the other side sent"
	}
	if strings.HasPrefix(method, "_") {
		return ""
	}
	set, defs, ok := c.lookup(method)
	if !ok || defs.response == "" || defs.side != "agent" {
		return fmt.Sprintf("answered %q, a method the agent does not serve in the published protocol", method)
	}
	result := gjson.GetBytes(l, "result")
	p.validated++
	if err := set.validate(defs.response, decode(result.Raw)); err != nil {
		return fmt.Sprintf("%s answer does not validate: %v", method, err)
	}
	if result.Get("models").Exists() {
		return fmt.Sprintf("%s answer carries models, which the protocol removed (the model is a config option of category model)", method)
	}
	return p.booleanLeak(result)
}

// subagentForm says whether a message is one of the subagents RFD's
// session updates ("rfd"), of its earlier draft ("draft"), or neither ("").
func subagentForm(method string, params gjson.Result) string {
	if method != "session/update" {
		return ""
	}
	switch params.Get("update.sessionUpdate").Str {
	case "subagent_update", "session_message", "session_message_chunk":
		return "rfd"
	case "subagent_spawned", "subagent_state_update", "async_task_spawned", "async_task_progress", "async_task_state_update":
		return "draft"
	}
	return ""
}

// allows says what is wrong with calling method on a client that declared p.
func (p *peer) allows(method string) string {
	need := map[string]bool{
		"fs/read_text_file":  p.fsRead,
		"fs/write_text_file": p.fsWrite,
		"elicitation/create": p.elicitation,
	}
	ok, gated := need[method]
	if strings.HasPrefix(method, "terminal/") {
		ok, gated = p.terminal, true
	}
	if gated && !ok {
		return fmt.Sprintf("%s sent to a client that did not declare it", method)
	}
	return ""
}

// booleanLeak finds a boolean config option sent to a client that did not
// declare clientCapabilities.session.configOptions.boolean.
func (p *peer) booleanLeak(v gjson.Result) string {
	if p.booleans {
		return ""
	}
	for _, path := range []string{"configOptions", "update.configOptions"} {
		for _, o := range v.Get(path).Array() {
			if o.Get("type").Str == "boolean" {
				return fmt.Sprintf("boolean config option %q sent to a client that did not declare session.configOptions.boolean", o.Get("id").Str)
			}
		}
	}
	return ""
}

// toValidate counts a message of kind and says whether it is validated
// against the schema: requests and answers always are, notifications up to
// perKind of each kind.
func (p *peer) toValidate(request bool, kind string) bool {
	if !request {
		p.seen[kind]++
	}
	if p.seen[kind] > perKind {
		return false
	}
	p.validated++
	return true
}

func decode(raw string) any {
	if raw == "" {
		return nil
	}
	var v any
	_ = json.Unmarshal([]byte(raw), &v)
	return v
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
