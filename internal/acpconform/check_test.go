package acpconform

import (
	"strings"
	"testing"
)

const (
	initPlain   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false}}}}`
	initBoolean = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"session":{"configOptions":{"boolean":{}}}}}}`
	newSession  = `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	initAnswer  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`
	boolOption  = `{"id":"fast","name":"Fast","type":"boolean","currentValue":false}`
	subagentUpd = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"scout","capabilities":{"cancel":{}},"state":{"state":"running"}}}}`
	selOption   = `{"id":"model","name":"Model","category":"model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"}]}`
)

func TestCheckAgentSide(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in, out, want string // want: "" for no violation, else a part of the problem
	}{
		{"a subagent update to a client that declared subagents", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}`, subagentUpd, ""},
		{"a subagent update to a client that did not declare them", initPlain, subagentUpd, "did not declare clientCapabilities.subagents"},
		{"a plain conversation", initPlain + "\n" + newSession, initAnswer + "\n" + `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","configOptions":[` + selOption + `]}}`, ""},
		{"a boolean option to a client that did not declare them", initPlain + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","configOptions":[` + boolOption + `]}}`, "boolean config option \"fast\""},
		{"a boolean option to a client that declared them", initBoolean + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","configOptions":[` + boolOption + `]}}`, ""},
		{"a boolean option in a config_option_update", initPlain, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"config_option_update","configOptions":[` + boolOption + `]}}}`, "boolean config option"},
		{"the removed models field", initPlain + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","models":{"currentModelId":"a","availableModels":[]}}}`, "carries models"},
		{"an answer that does not validate", initPlain + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":7}}`, "does not validate"},
		{"an answer to nothing", initPlain, `{"jsonrpc":"2.0","id":9,"result":{}}`, "no request"},
		{"fs/write to a client that declared only reads", initPlain, `{"jsonrpc":"2.0","id":5,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/tmp/x","content":"x"}}`, "did not declare"},
		{"fs/read to a client that declared reads", initPlain, `{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/tmp/x"}}`, ""},
		{"terminal/create to a client without terminals", initPlain, `{"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"sessionId":"s1","command":"ls"}}`, "did not declare"},
		{"a method the protocol does not have", initPlain, `{"jsonrpc":"2.0","id":5,"method":"session/set_model","params":{}}`, "not in the published protocol"},
		{"a method that is the client's to send", initPlain, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, "client's to send"},
		{"an extension method", initPlain, `{"jsonrpc":"2.0","id":5,"method":"_kandev/x","params":{"anything":1}}`, ""},
		{"an error answer", initPlain + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, ""},
		{"an error that does not validate", initPlain + "\n" + newSession, `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, "error does not validate"},
		{"no jsonrpc version", initPlain + "\n" + newSession, `{"id":1,"result":{"sessionId":"s1"}}`, "jsonrpc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs := c.CheckAgentSide([]byte(tc.in), []byte(tc.out))
			switch {
			case tc.want == "" && len(vs) > 0:
				t.Fatalf("want no violation, got %v", vs)
			case tc.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Problem, tc.want)):
				t.Fatalf("want one violation with %q, got %v", tc.want, vs)
			}
		})
	}
}

// Past perKind notifications of one kind, a conversation stops checking
// that kind against the schema, but not the other rules, and not another
// kind.
func TestCheckAgentSide_ManyNotificationsOfOneKind(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`
	badChunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":7}}}`
	badPlan := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":7}}}`
	leak := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","configOptions":[` + boolOption + `]}}}`
	out := strings.Repeat(chunk+"\n", perKind-1) + badChunk + "\n" + strings.Repeat(chunk+"\n", 10) + badChunk + "\n" + leak + "\n" + badPlan + "\n"
	vs, validated := c.checkAgentSide([]byte(initPlain), []byte(out))
	if validated != perKind+1 {
		t.Fatalf("validated %d messages, want %d", validated, perKind+1)
	}
	var lines []int
	for _, v := range vs {
		lines = append(lines, v.Line)
	}
	// The bad chunk within the first perKind, the leak, the bad plan; not
	// the bad chunk past the bound.
	if len(vs) != 3 || vs[0].Line != perKind || vs[1].Line != perKind+12 || vs[2].Line != perKind+13 {
		t.Fatalf("violations at lines %v, want %d, %d and %d: %v", lines, perKind, perKind+12, perKind+13, vs)
	}
}
