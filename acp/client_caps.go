package acp

import (
	"bytes"
	"encoding/json"
)

// What kandev declares as a client beyond the SDK's types: ACP v1's
// clientCapabilities.session.configOptions.boolean, so that an agent may
// offer on/off options (kandev sets them: --set fast=on), and the
// subagents RFD's clientCapabilities.subagents, so that an agent's
// children come as sessions of their own, recorded apart from the
// parent's stream (subagent_updates.go). The SDK's
// ClientCapabilities has no session field, so the initialize request is
// given it on its way to the agent (cancelWriter.Write).

var initializeMethod = []byte(`"method":"initialize"`)

// withSessionCapabilities adds the session capability to an initialize
// request line; any other line, or one it cannot read, is returned as is.
func withSessionCapabilities(line []byte) []byte {
	if !bytes.Contains(line, initializeMethod) {
		return line
	}
	var m map[string]any
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil || m["method"] != "initialize" {
		return line
	}
	params, _ := m["params"].(map[string]any)
	if params == nil {
		return line
	}
	caps, _ := params["clientCapabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		params["clientCapabilities"] = caps
	}
	caps["session"] = map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}
	caps["subagents"] = map[string]any{}
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(b, '\n')
}
