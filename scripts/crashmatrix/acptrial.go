//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// kindACPLoad: an editor's session/load of a session a SIGKILL left open at
// a tool call, with kandev acp SIGKILLed inside the load: before the
// repair, between the repair and the continuation, during the continuation
// (its own turn is then cut off), or after it.
const kindACPLoad = "acp-load"

// acpLoadTrial feeds kandev acp an editor's initialize and session/load,
// then closes stdin: uninterrupted, kandev acp answers both, carries the
// continuation to its end and exits 0. Killed anywhere, the log is
// readable and append-only, and the next resume leaves no turn open, gives
// each open tool call one unknown-outcome result, and has continued every
// cut-off turn exactly once: as many continuations as turns that ended
// "shutdown", whichever of them kandev acp had got to.
type acpLoadTrial struct {
	interruptTrial
}

func (t *acpLoadTrial) args() []string { return []string{"acp"} }

// stdin is what the editor writes before it closes kandev acp's stdin.
func (t *acpLoadTrial) stdin() string {
	line := func(id int, method string, params any) string {
		b, _ := json.Marshal(struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int    `json:"id"`
			Method  string `json:"method"`
			Params  any    `json:"params"`
		}{"2.0", id, method, params})
		return string(b) + "\n"
	}
	return line(1, "initialize", sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}) +
		line(2, "session/load", sdk.LoadSessionRequest{SessionId: sdk.SessionId(t.id), Cwd: t.cwd, McpServers: []sdk.McpServer{}})
}

func (t *acpLoadTrial) check(killed bool, res cmdResult) string {
	r := t.r
	if !killed && !strings.Contains(res.stdout, `"id":2,"result"`) {
		r.failf("kandev acp (not killed) did not answer session/load: %.200q", res.stdout)
	}
	ids, ok := t.listIDs("after the killed kandev acp")
	if !ok {
		return ""
	}
	if !ids[t.id] {
		r.failf("session %s is not listed after the killed kandev acp", t.id)
	}
	l1, ok := t.cleanLog(t.id, "after the killed kandev acp")
	if !ok {
		return ""
	}
	t.checkAppendOnly(&sessionLog{lines: t.l0.lines}, l1, "the killed kandev acp")
	land := opBefore
	for _, u := range turns(l1.events())[1:] {
		land = opPartial
		if u.source == "continuation" && u.ended {
			land = opComplete
		}
	}
	if land == opBefore && len(l1.lines) > len(t.l0.lines) {
		land = opPartial // repaired, not yet continued
	}

	c := t.kandev(cmdTimeout, "--json", "resume", t.id)
	t.save("resume1.out", c.stdout+"\n--- stderr (exit "+fmt.Sprint(c.code)+")\n"+c.stderr)
	if c.code != 0 {
		r.failf("resume after the killed kandev acp: %s", c.brief())
		return land
	}
	l, ok := t.cleanLog(t.id, "after resume")
	if !ok {
		return land
	}
	t.checkAppendOnly(l1, l, "resume after the killed kandev acp")
	conts, cut := 0, 0
	for _, u := range turns(l.events()) {
		if u.source == "continuation" {
			conts++
		}
		if u.stopReason == "shutdown" {
			cut++
		}
		if !u.ended {
			r.failf("turn %s still open after resume", u.id)
		}
	}
	r.continuations = conts
	if conts != cut || conts == 0 {
		r.failf("%d continuation(s) for %d cut-off turn(s) after the killed kandev acp and a resume, want one each", conts, cut)
	}
	unknown := map[string]int{}
	for _, e := range l.events() {
		if e.Type == "tool_result" && e.ToolStatus == "unknown" {
			unknown[e.ToolCallID]++
		}
	}
	for _, id := range t.open {
		if unknown[id] != 1 {
			r.failf("open tool call %s got %d unknown-outcome results, want 1", id, unknown[id])
		}
	}
	r.outcome = outContinued
	return land
}
