package subagents

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

type step struct {
	session, update string
}

func TestRouter(t *testing.T) {
	announce := step{"P", `{"sessionUpdate":"subagent_update","sessionId":"C","title":"scout","description":"general-purpose","capabilities":{"cancel":{}},"state":{"state":"running"}}`}
	idle := func(stop string) step {
		return step{"P", `{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"idle","stopReason":"` + stop + `"}}`}
	}
	cases := []struct {
		name    string
		before  []step
		step    step
		action  Action
		child   string
		state   string
		warning string // a substring; "" means none
	}{
		{"an update of the parent stays the parent's", nil, step{"P", `{"sessionUpdate":"agent_message_chunk"}`}, ToParent, "", "", ""},
		{"the first subagent_update announces the child", nil, announce, Started, "C", "", ""},
		{"the child's own session id routes to its stream", []step{announce}, step{"C", `{"sessionUpdate":"tool_call"}`}, ToChild, "C", "", ""},
		{"idle with end_turn completes it", []step{announce}, idle("end_turn"), Ended, "C", Completed, ""},
		{"idle with cancelled cancels it", []step{announce}, idle("cancelled"), Ended, "C", Cancelled, ""},
		{"idle with error fails it", []step{announce}, idle("error"), Ended, "C", Failed, ""},
		{"idle without a stop reason is a disconnect, never a completion", []step{announce}, idle(""), Ended, "C", Disconnected, ""},
		{"work state unknown is a disconnect", []step{announce}, step{"P", `{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"unknown"}}`}, Ended, "C", Disconnected, ""},
		{"a second end is recorded with a warning", []step{announce, idle("end_turn")}, idle("end_turn"), Ended, "C", Completed, "second end"},
		{"an idle child given work again is no warning", []step{announce, idle("end_turn")}, step{"P", `{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"running"}}`}, ToChild, "C", "", ""},
		{"an update for a never-announced session warns", nil, step{"X", `{"sessionUpdate":"agent_message_chunk"}`}, ToChild, "X", "", "never announced"},
		{"the warning for a stranger comes once", []step{{"X", `{"sessionUpdate":"agent_message_chunk"}`}}, step{"X", `{"sessionUpdate":"agent_message_chunk"}`}, ToChild, "X", "", ""},
		{"an end for a never-announced child warns", nil, idle("end_turn"), Ended, "C", Completed, "never announced"},
		{"the draft's spawn reusing an id warns", []step{announce}, step{"P", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"C","name":"n","task":"t","prompt":"p"}`}, Started, "C", "", "reused"},
		{"the draft's state update ends the child", []step{{"P", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"C","name":"n","task":"t"}`}}, step{"P", `{"sessionUpdate":"subagent_state_update","subagentSessionId":"C","state":"failed"}`}, Ended, "C", Failed, ""},
		{"an async task's stop is a cancel", []step{{"P", `{"sessionUpdate":"async_task_spawned","asyncTaskId":"T","name":"bash","description":"npm test","canStop":true}`}}, step{"P", `{"sessionUpdate":"async_task_state_update","asyncTaskId":"T","state":"stopped"}`}, Ended, "T", Cancelled, ""},
		{"an async task's progress is its stream", []step{{"P", `{"sessionUpdate":"async_task_spawned","asyncTaskId":"T"}`}}, step{"P", `{"sessionUpdate":"async_task_progress","asyncTaskId":"T"}`}, ToChild, "T", "", ""},
		{"the child's incoming prompt is its prompt", []step{announce}, step{"C", `{"sessionUpdate":"session_message","messageId":"toolu_1","senderSessionId":"P","recipientSessionId":"C","content":[{"type":"text","text":"go"}]}`}, ChildPrompt, "C", "", ""},
		{"the parent's outgoing view of the prompt is dropped", []step{announce}, step{"P", `{"sessionUpdate":"session_message","messageId":"toolu_1","senderSessionId":"P","recipientSessionId":"C","content":[]}`}, Drop, "", "", ""},
		{"the child's answer to its parent is the child's", []step{announce}, step{"P", `{"sessionUpdate":"session_message","messageId":"toolu_1:reply","senderSessionId":"C","recipientSessionId":"P","content":[]}`}, ToChild, "C", "", ""},
		{"a subagent_update without a child id warns and stays the parent's", nil, step{"P", `{"sessionUpdate":"subagent_update","state":{"state":"running"}}`}, ToParent, "", "", "without a child"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Router{Parent: "P"}
			for _, s := range c.before {
				r.Route(s.session, gjson.Parse(s.update))
			}
			got := r.Route(c.step.session, gjson.Parse(c.step.update))
			if got.Action != c.action || got.Child != c.child || got.State != c.state {
				t.Fatalf("got %+v, want action %d child %q state %q", got, c.action, c.child, c.state)
			}
			if (c.warning == "") != (got.Warning == "") || !strings.Contains(got.Warning, c.warning) {
				t.Fatalf("warning %q, want %q", got.Warning, c.warning)
			}
		})
	}
}

func TestRouter_SpawnReadsNameTaskAndCancel(t *testing.T) {
	r := &Router{Parent: "P"}
	got := r.Route("P", gjson.Parse(`{"sessionUpdate":"subagent_update","sessionId":"C","title":"scout","description":"Explore","capabilities":{"cancel":{}},"state":{"state":"running"}}`))
	if got.Spawn.Name != "scout" || got.Spawn.Task != "Explore" || !got.Spawn.CanCancel || got.Spawn.Parent != "P" || got.Spawn.Kind != KindSubagent {
		t.Fatalf("spawn %+v", got.Spawn)
	}
}

func TestRouter_ARestoredAgentRetellingAChildOfTheLogRecordsNothing(t *testing.T) {
	idle := `{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"idle","stopReason":"end_turn"}}`
	cases := []struct {
		name   string
		ended  bool
		steps  []string
		action Action
		warn   bool
	}{
		{"its end again is dropped", true, []string{idle}, Drop, false},
		{"its end with no stop reason is dropped", true, []string{`{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"idle"}}`}, Drop, false},
		{"the draft's announcement again is dropped", true, []string{`{"sessionUpdate":"subagent_spawned","subagentSessionId":"C","name":"n"}`}, Drop, false},
		{"a child the log has running ends as usual", false, []string{idle}, Ended, false},
		{"given work again, its next end is recorded", true, []string{`{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"running"}}`, idle}, Ended, false},
		{"given work again, a second end warns", true, []string{`{"sessionUpdate":"subagent_update","sessionId":"C","state":{"state":"running"}}`, idle, idle}, Ended, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Router{Parent: "P"}
			r.Know("C", c.ended)
			var got Route
			for _, s := range c.steps {
				got = r.Route("P", gjson.Parse(s))
			}
			if got.Action != c.action || (got.Warning != "") != c.warn {
				t.Fatalf("got %+v, want action %d warning %v", got, c.action, c.warn)
			}
		})
	}
}

func TestRouter_KnownChildFromTheLogIsNoStranger(t *testing.T) {
	r := &Router{Parent: "P"}
	r.Know("C", false)
	if got := r.Route("C", gjson.Parse(`{"sessionUpdate":"agent_message_chunk"}`)); got.Warning != "" || got.Action != ToChild {
		t.Fatalf("got %+v", got)
	}
}
