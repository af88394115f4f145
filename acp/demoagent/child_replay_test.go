package demoagent

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestSubagent_ALoadReplaysTheChildrenThenTellsTheirStateAfterItsAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startRawIn(t, dir, `{"subagents":{}}`)
	parent := p.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`, nil).Get("sessionId").Str
	p.prompt(parent, "/subagent scout /say found it\n/say back")

	q := startRawIn(t, dir, `{"subagents":{}}`)
	var kinds []string
	child := ""
	q.call("session/load", `{"sessionId":"`+parent+`","cwd":"/tmp","mcpServers":[]}`, func(l string) {
		kind := gjson.Get(l, "params.update.sessionUpdate").Str
		if kind == "subagent_update" && child == "" {
			child = gjson.Get(l, "params.update.sessionId").Str
		}
		who := "parent"
		if sid := gjson.Get(l, "params.sessionId").Str; sid == child {
			who = "child"
		}
		if kind == "subagent_update" {
			kind += ":" + gjson.Get(l, "params.update.state.state").Str + ":" + gjson.Get(l, "params.update.state.stopReason").Str
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != who+":"+kind {
			kinds = append(kinds, who+":"+kind)
		}
	})
	want := []string{"parent:user_message_chunk", "parent:subagent_update:running:", "parent:session_message", "child:session_message",
		"child:agent_message_chunk", "parent:agent_message_chunk", "parent:subagent_update:idle:end_turn"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("replay\n got %v\nwant %v", kinds, want)
	}
	after, err := q.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if gjson.Get(after, "params.update.sessionId").Str != child || gjson.Get(after, "params.update.state.stopReason").Str != "end_turn" {
		t.Fatalf("after the answer: %s", after)
	}
}
