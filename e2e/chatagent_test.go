package e2e_test

// Scenarios the Copilot and OpenCode suites share: both agents are real CLIs
// that talk to testdata/fakemodel -format chat, so the same kill, cancel, permission and
// probe checks apply to either; each suite adds what is its agent's own.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// chatAgent is a world whose agent profile name is a real CLI behind the
// fake chat server; every process of the rig carries tagKey=tagValue in its
// environment.
type chatAgent struct {
	*world
	name   string // the agent profile
	label  string // how messages name the agent
	fake   *fakeChat
	tagKey string
	tagVal string
}

// live is the pids of the rig's agent processes still running.
func (r *chatAgent) live() []int { return liveProcessesWithEnv(r.tagKey, r.tagVal) }

// assertNoAgentSurvives waits up to 10 s for every process of this rig and
// of the session id, if any, to be gone.
func (r *chatAgent) assertNoAgentSurvives(id, after string) {
	r.t.Helper()
	waitGone(r.t, r.label+" processes", after, func() []int {
		live := r.live()
		if id != "" {
			live = append(live, liveProcessesWithEnv("KANDEV_SESSION_ID", id)...)
		}
		return live
	})
}

// killOwnerMidTurnThenResume SIGKILLs the owner while the agent streams
// slowPrompt's answer and checks that nothing survives, that resume
// restores the agent with wantRestore and continues the cut-off turn once,
// with the earlier turns in the model's request, and that a second resume
// owes nothing. slowInHistory: the agent keeps the cut-off prompt in the
// history it sends the model.
func (r *chatAgent) killOwnerMidTurnThenResume(t *testing.T, slowPrompt, wantRestore string, slowInHistory bool) {
	first := "first fast turn about apples"
	id, res := r.start("--agent", r.name, first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	firstAnswer := agentText(r.events(id), lastTurn(r.events(id)))

	owner := r.spawn("prompt", id, slowPrompt)
	r.waitForEvents(id, "the slow turn to stream", openCodeStreamingTurn(slowPrompt))
	if len(r.live()) == 0 {
		t.Fatalf("no %s process is running the slow turn", r.label)
	}
	owner.cmd.Process.Kill() // SIGKILL: no chance to clean up
	owner.wait(t)
	r.assertNoAgentSurvives(id, "the owner was SIGKILLed")
	killedAt := len(r.eventsSoFar(id)) // the kill may have torn the last line
	before := len(r.fake.turns())

	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	r.assertNoAgentSurvives(id, "resume exited")
	all := r.events(id)
	assertNoSeqGap(t, all)
	evs := all[killedAt:]
	if starts := ofType(evs, eventlog.EventAgentStarted); len(starts) != 1 || starts[0].Restore != wantRestore {
		t.Errorf("agent_started after the kill: %+v, want restore %s", starts, wantRestore)
	}
	var continuations []eventlog.Event
	for _, e := range ofType(evs, eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			continuations = append(continuations, e)
		}
	}
	if len(continuations) != 1 {
		t.Fatalf("resume sent %d continuation turns, want 1\n%s", len(continuations), res)
	}
	if s := r.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
		t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
	}
	// The continuation's model request carried the earlier turns.
	turns := r.fake.turns()
	if len(turns) != before+1 {
		t.Fatalf("the model got %d requests during resume, want 1", len(turns)-before)
	}
	q := turns[len(turns)-1]
	users := q.userTexts()
	earlier := 2 // the first prompt and the continuation
	if slowInHistory {
		earlier = 3
	}
	if len(users) < earlier || users[0] != first || slowInHistory && users[1] != slowPrompt || users[len(users)-1] == slowPrompt {
		t.Fatalf("user messages the model saw for the continuation: %q", users)
	}
	if !strings.Contains(q.input(), firstAnswer) {
		t.Fatalf("the first answer is missing from the continuation's request:\n%s", q.input())
	}
	if answer := agentText(all, continuations[0].TurnID); answer != fmt.Sprintf("ack %d: %s", q.N, start60(users[len(users)-1])) {
		t.Fatalf("the continuation's answer %q is not the model's reply to request %d", answer, q.N)
	}

	// A second resume finds nothing owed: no turn, no model request.
	res = r.run("resume", id)
	if res.code != 0 {
		t.Fatalf("second resume: %s", res)
	}
	r.assertNoAgentSurvives(id, "the second resume exited")
	if n := len(ofType(r.events(id), eventlog.EventTurnStarted)) - len(ofType(all, eventlog.EventTurnStarted)); n != 0 {
		t.Fatalf("the second resume started %d turns", n)
	}
	if n := len(r.fake.turns()); n != len(turns) {
		t.Fatalf("the second resume sent %d model requests", n-len(turns))
	}
}

// cancelSlowTurnFromAnotherProcess runs `kandev cancel` while a prompt in
// another process streams slowPrompt's answer: the turn ends cancelled, no
// agent process survives, and the session takes the next prompt.
func (r *chatAgent) cancelSlowTurnFromAnotherProcess(t *testing.T, slowPrompt string) {
	id, res := r.start("--agent", r.name, "a fast first turn")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	owner := r.spawn("prompt", id, slowPrompt)
	r.waitForEvents(id, "the slow turn to stream", openCodeStreamingTurn(slowPrompt))
	cancelled := time.Now()
	if res := r.run("cancel", id); res.code != 0 {
		owner.cmd.Process.Kill()
		t.Fatalf("cancel: %s", res)
	}
	res = owner.wait(t)
	t.Logf("the prompt ended %s after kandev cancel returned", time.Since(cancelled).Round(time.Millisecond))
	if res.code != 0 && res.code != 130 {
		t.Errorf("the cancelled prompt exited %d, want 0 or 130\n%s", res.code, res)
	}
	r.assertNoAgentSurvives(id, "the cancelled prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	ended := ofType(evs, eventlog.EventTurnEnded)
	if len(ended) == 0 || ended[len(ended)-1].StopReason != "cancelled" {
		t.Fatalf("turn_ended events: %+v", ended)
	}
	if s := r.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
	}
	if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
		t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
	}
	if res := r.run("prompt", id, "after the cancel"); res.code != 0 || !strings.Contains(res.stdout, "after the cancel") {
		t.Fatalf("prompt after cancel: %s", res)
	}
	r.assertNoAgentSurvives(id, "the last prompt exited")
}

// startToolTurn starts a session under permission mode whose first prompt
// makes the model ask for the proof command (toolWord), and checks that the
// command ran exactly when allowed, that the log holds one permission
// request and its answer for one tool call, and that call's one result
// with status. It returns the session, its log and the tool call.
func (r *chatAgent) startToolTurn(t *testing.T, mode, toolWord string, allowed bool, status string) (string, []eventlog.Event, string) {
	id, res := r.start("--agent", r.name, "--permissions", mode, "please "+toolWord+" now")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.assertNoAgentSurvives(id, "start exited")
	_, err := os.Stat(filepath.Join(r.cwd, "tool-proof.txt"))
	if ran := err == nil; ran != allowed {
		t.Fatalf("the command ran: %v, want %v", ran, allowed)
	}
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	asked, resolved := ofType(evs, eventlog.EventPermissionRequest), ofType(evs, eventlog.EventPermissionResolved)
	if len(asked) != 1 || len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), fmt.Sprintf(`"allowed":%v`, allowed)) {
		t.Fatalf("permission events: %+v %+v", asked, resolved)
	}
	call := asked[0].ToolCallID
	if call == "" || resolved[0].ToolCallID != call {
		t.Fatalf("permission request and answer name different tool calls: %q, %q", call, resolved[0].ToolCallID)
	}
	results := ofType(evs, eventlog.EventToolResult)
	if len(results) != 1 || results[0].ToolCallID != call || results[0].ToolStatus != status {
		t.Fatalf("tool_result events: %+v", results)
	}
	return id, evs, call
}

// probedCapabilities is what `kandev agents --probe` reports of an agent.
type probedCapabilities struct {
	LoadSession         bool                       `json:"loadSession"`
	SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
}

// probe runs `kandev agents --probe` and returns the agent capabilities it
// reports for the rig's agent, checking that the agent is installed, loads
// sessions, is at version, cost no model request and left no process.
func (r *chatAgent) probe(t *testing.T, version string) probedCapabilities {
	var out struct {
		Agents []struct {
			Name         string
			Installed    bool
			Capabilities struct {
				AgentCapabilities probedCapabilities             `json:"agentCapabilities"`
				AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
			}
		}
	}
	decodeJSON(t, r.mustRun("agents", "--probe", "--json").stdout, &out)
	for _, a := range out.Agents {
		if a.Name != r.name {
			continue
		}
		caps := a.Capabilities.AgentCapabilities
		if !a.Installed || !caps.LoadSession || a.Capabilities.AgentInfo.Version != version {
			t.Fatalf("%s: %+v", r.name, a)
		}
		if n := len(r.fake.turns()); n != 0 {
			t.Errorf("probing sent %d model requests", n)
		}
		r.assertNoAgentSurvives("", "kandev agents --probe exited")
		return caps
	}
	t.Fatalf("kandev agents lists no %s", r.name)
	return probedCapabilities{}
}
