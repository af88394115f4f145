package setup

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

func TestParseMCPFile(t *testing.T) {
	cases := []struct {
		name, file string
		want       []state.MCPServer
		err        string // a part of the error; "" for none
	}{
		{"stdio server with a reference", `{"mcpServers":{"notes":{"command":"notes-mcp","args":["--dir","x"],"env":{"NOTES_TOKEN":"${NOTES_TOKEN}"}}}}`,
			[]state.MCPServer{{Name: "notes", Command: "notes-mcp", Args: []string{"--dir", "x"}, Env: map[string]string{"NOTES_TOKEN": "${NOTES_TOKEN}"}}}, ""},
		{"http and sse servers, sorted by name", `{"mcpServers":{"web":{"type":"http","url":"https://mcp.example.com","headers":{"Authorization":"Bearer ${TOKEN}"}},"events":{"type":"sse","url":"https://e.example.com/sse"}}}`,
			[]state.MCPServer{{Name: "events", Type: "sse", URL: "https://e.example.com/sse"}, {Name: "web", Type: "http", URL: "https://mcp.example.com", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}}, ""},
		{"explicit stdio type is the default", `{"mcpServers":{"a":{"type":"stdio","command":"a"}}}`, []state.MCPServer{{Name: "a", Command: "a"}}, ""},
		{"not JSON", `{"mcpServers":`, nil, "not JSON"},
		{"no mcpServers", `{"servers":{}}`, nil, `no "mcpServers"`},
		{"stdio without command", `{"mcpServers":{"a":{"args":["x"]}}}`, nil, "has no command"},
		{"http without url", `{"mcpServers":{"a":{"type":"http"}}}`, nil, "has no url"},
		{"unknown type", `{"mcpServers":{"a":{"type":"ws","url":"x"}}}`, nil, `type "ws"`},
		{"literal secret in env", `{"mcpServers":{"a":{"command":"a","env":{"API_KEY":"hunter2hunter2"}}}}`, nil, "env API_KEY holds what looks like a secret"},
		{"provider token in env", `{"mcpServers":{"a":{"command":"a","env":{"X":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}}`, nil, "env X holds what looks like a secret"},
		{"literal bearer header", `{"mcpServers":{"a":{"type":"http","url":"https://x","headers":{"Authorization":"Bearer abcdef0123456789"}}}}`, nil, "header Authorization holds what looks like a secret"},
		{"secret in the url", `{"mcpServers":{"a":{"type":"http","url":"https://user:pass1234@x.example.com"}}}`, nil, "url hold what looks like a secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseMCPFile("f.json", []byte(c.file))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrBadSetup) {
					t.Fatalf("err = %v, want one with %q", err, c.err)
				}
				if strings.Contains(c.name, "secret") && !strings.Contains(err.Error(), "${") {
					t.Fatalf("the refusal gives no advice to use a reference: %v", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	got, err := ParseOptions([]string{"effort=low", "verbose=true", "effort=high"})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"effort": "high", "verbose": "true"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"effort", "=x", "effort=", "api_key=hunter2hunter2", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"} {
		if _, err := ParseOptions([]string{bad}); !errors.Is(err, ErrBadSetup) {
			t.Fatalf("%q: err = %v", bad, err)
		}
	}
}

func TestInitial_FlagsWinOverConfig(t *testing.T) {
	cfg := &config.Config{
		Agents: map[string]config.AgentProfile{"demo": {AgentSetupConfig: config.AgentSetupConfig{
			Model: "demo-small", Mode: "ask", Options: map[string]string{"effort": "low", "style": "terse"}, MCP: []string{"notes", "web"},
		}}},
		MCP: map[string]state.MCPServer{
			"notes": {Command: "notes-mcp"},
			"web":   {Type: "http", URL: "https://web"},
		},
	}
	fileNotes := state.MCPServer{Name: "notes", Command: "other-notes"}
	cases := []struct {
		name      string
		agent     string
		flags     Flags
		want      *state.Setup
		wantSrv   []string // commands or urls, in order
		wantError string
	}{
		{"config defaults alone", "demo", Flags{},
			&state.Setup{Model: "demo-small", Mode: "ask", Options: map[string]string{"effort": "low", "style": "terse"}, MCPServers: []string{"notes", "web"}},
			[]string{"notes-mcp", "https://web"}, ""},
		{"flags replace model and mode, add options, a file's server of the same name replaces", "demo",
			Flags{Change: Change{Model: "demo-large", Mode: "code", Options: map[string]string{"effort": "high"}}, MCP: []state.MCPServer{fileNotes}},
			&state.Setup{Model: "demo-large", Mode: "code", Options: map[string]string{"effort": "high", "style": "terse"}, MCPServers: []string{"web", "notes"}},
			[]string{"https://web", "other-notes"}, ""},
		{"another agent has no defaults", "codex", Flags{}, nil, nil, ""},
		{"another agent with flags only", "codex", Flags{Change: Change{Mode: "code"}}, &state.Setup{Mode: "code"}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, srv, err := Initial(cfg, c.agent, c.flags)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("setup %+v, want %+v", got, c.want)
			}
			var where []string
			for _, s := range srv {
				where = append(where, s.Command+s.URL)
			}
			if !reflect.DeepEqual(where, c.wantSrv) {
				t.Fatalf("servers %v, want %v", where, c.wantSrv)
			}
		})
	}
	t.Run("an unknown [mcp.NAME] is refused", func(t *testing.T) {
		cfg := &config.Config{Agents: map[string]config.AgentProfile{"demo": {AgentSetupConfig: config.AgentSetupConfig{MCP: []string{"nope"}}}}}
		if _, _, err := Initial(cfg, "demo", Flags{}); err == nil || !strings.Contains(err.Error(), "no [mcp.nope] table") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a literal secret in a config table is refused", func(t *testing.T) {
		cfg := &config.Config{Agents: map[string]config.AgentProfile{"demo": {AgentSetupConfig: config.AgentSetupConfig{MCP: []string{"gh"}}}},
			MCP: map[string]state.MCPServer{"gh": {Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}}
		if _, _, err := Initial(cfg, "demo", Flags{}); err == nil || !strings.Contains(err.Error(), "[mcp.gh]") || !strings.Contains(err.Error(), "${GITHUB_TOKEN}") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestExpand_ReferencesResolvedForTheAgentOnly(t *testing.T) {
	servers := []state.MCPServer{
		{Name: "notes", Command: "notes-mcp", Env: map[string]string{"TOKEN": "${NOTES_TOKEN}", "MODE": "plain", "BOTH": "${A}-${MISSING}"}},
		{Name: "web", Type: "http", URL: "https://${HOST}/mcp", Headers: map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"}},
		{Name: "ev", Type: "sse", URL: "https://e/sse"},
	}
	env := map[string]string{"NOTES_TOKEN": "s3cr3t", "A": "a", "HOST": "mcp.example.com", "WEB_TOKEN": "tok"}
	out, missing := Expand(servers, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if !reflect.DeepEqual(missing, []string{"MISSING"}) {
		t.Fatalf("missing = %v", missing)
	}
	st := out[0].Stdio
	if st == nil || !reflect.DeepEqual(st.Env, []sdk.EnvVariable{{Name: "BOTH", Value: "a-"}, {Name: "MODE", Value: "plain"}, {Name: "TOKEN", Value: "s3cr3t"}}) || st.Args == nil {
		t.Fatalf("stdio: %+v", st)
	}
	if h := out[1].Http; h == nil || h.Url != "https://mcp.example.com/mcp" || h.Headers[0].Value != "Bearer tok" {
		t.Fatalf("http: %+v", out[1])
	}
	if s := out[2].Sse; s == nil || s.Url != "https://e/sse" || s.Headers == nil {
		t.Fatalf("sse: %+v", out[2])
	}
	if servers[0].Env["TOKEN"] != "${NOTES_TOKEN}" {
		t.Fatal("Expand changed the recorded servers")
	}
	if out, _ := Expand(nil, nil); out == nil {
		t.Fatal("no servers must be an empty list, not null, on the wire")
	}
}

// codexLike offers its models as a config option of category model only.
var codexLike = Offered{Modes: []string{"read-only", "auto"}, Mode: "auto",
	Options: map[string]Option{"model": {Current: "gpt-5.4-mini", Values: []string{"gpt-5.4", "gpt-5.4-mini"}, Category: "model"}}}

func TestReconcile(t *testing.T) {
	off := Offered{
		Modes: []string{"ask", "code"}, Mode: "ask",
		Models: []string{"demo-small", "demo-large"}, Model: "demo-small",
		Options: map[string]Option{"effort": {Current: "low", Values: []string{"low", "high"}}, "verbose": {Current: "false", Boolean: true}},
	}
	cases := []struct {
		name        string
		want        *state.Setup
		off         Offered
		steps       []Step
		missingPart []string
	}{
		{"nothing recorded: nothing to do", nil, off, nil, nil},
		{"the agent already matches", &state.Setup{Mode: "ask", Model: "demo-small", Options: map[string]string{"effort": "low"}}, off, nil, nil},
		{"what differs is applied again, mode then model then options",
			&state.Setup{Mode: "code", Model: "demo-large", Options: map[string]string{"verbose": "true", "effort": "high"}}, off,
			[]Step{{Kind: StepMode, Value: "code"}, {Kind: StepModel, Value: "demo-large"}, {Kind: StepOption, Key: "effort", Value: "high"}, {Kind: StepOption, Key: "verbose", Value: "true", Boolean: true}}, nil},
		{"what the agent no longer offers is named",
			&state.Setup{Mode: "plan", Model: "gpt-9", Options: map[string]string{"effort": "max", "temperature": "1", "verbose": "yes"}}, off,
			nil, []string{"mode plan (it offers ask, code)", "model gpt-9", "option effort=max", "option temperature", "option verbose=yes"}},
		{"an agent that offers nothing", &state.Setup{Mode: "code", Model: "m", Options: map[string]string{"k": "v"}}, Offered{},
			nil, []string{"the agent offers no modes", "no model choice", "option k (it offers none)"}},
		{"MCP servers alone need no step", &state.Setup{MCPServers: []string{"notes"}}, Offered{}, nil, nil},
		{"models offered as a config option only: the model is set through it",
			&state.Setup{Model: "gpt-5.4"}, codexLike, []Step{{Kind: StepOption, Key: "model", Value: "gpt-5.4"}}, nil},
		{"models offered as a config option only: already the current one", &state.Setup{Model: "gpt-5.4-mini"}, codexLike, nil, nil},
		{"modes offered as a config option only: the mode is set through it",
			&state.Setup{Mode: "plan"}, Offered{Options: map[string]Option{"mode": {Current: "build", Values: []string{"build", "plan"}, Category: "mode"}}},
			[]Step{{Kind: StepOption, Key: "mode", Value: "plan"}}, nil},
		{"models offered as a config option only: one it does not offer is named",
			&state.Setup{Model: "gpt-9"}, codexLike, nil, []string{"model gpt-9 (it offers gpt-5.4, gpt-5.4-mini)"}},
		{"a boolean option takes on and off",
			&state.Setup{Options: map[string]string{"verbose": "on"}}, off, []Step{{Kind: StepOption, Key: "verbose", Value: "true", Boolean: true}}, nil},
		{"a boolean option already off", &state.Setup{Options: map[string]string{"verbose": "OFF"}}, off, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps, missing := Reconcile(c.want, c.off)
			if !reflect.DeepEqual(steps, c.steps) {
				t.Fatalf("steps %+v, want %+v", steps, c.steps)
			}
			if len(missing) != len(c.missingPart) {
				t.Fatalf("missing %q, want %d naming %q", missing, len(c.missingPart), c.missingPart)
			}
			for i, part := range c.missingPart {
				if !strings.Contains(missing[i], part) {
					t.Fatalf("missing[%d] = %q, want it to name %q", i, missing[i], part)
				}
			}
		})
	}
}

func TestRuns_IsWhatTheAgentRunsInsteadOfWhatItDoesNotOffer(t *testing.T) {
	off := Offered{
		Modes: []string{"ask", "code"}, Mode: "ask",
		Options: map[string]Option{
			"model":  {Current: "small", Values: []string{"small", "large"}, Category: "model"},
			"effort": {Current: "low", Values: []string{"low", "high"}, Category: "thought_level"},
			"fast":   {Current: "false", Boolean: true},
		},
	}
	cases := []struct {
		name      string
		want, out *state.Setup
	}{
		{"nothing recorded", nil, nil},
		{"all offered: unchanged but booleans as true/false",
			&state.Setup{Mode: "code", Model: "large", Options: map[string]string{"effort": "high", "fast": "on"}},
			&state.Setup{Mode: "code", Model: "large", Options: map[string]string{"effort": "high", "fast": "true"}}},
		{"not offered: what runs instead",
			&state.Setup{Mode: "plan", Model: "opus", Options: map[string]string{"effort": "max", "fast": "maybe", "temp": "1"}, MCPServers: []string{"notes"}},
			&state.Setup{Mode: "ask", Model: "small", Options: map[string]string{"effort": "low", "fast": "false"}, MCPServers: []string{"notes"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, first := range []bool{true, false} {
				if got := Runs(c.want, off, first); !reflect.DeepEqual(got, c.out) {
					t.Fatalf("Runs (first launch %v) = %+v, want %+v", first, got, c.out)
				}
			}
		})
	}
	// A kind the agent answered nothing about: left out on the first launch,
	// kept on a restore (its answer may just leave it out).
	asked := &state.Setup{Mode: "plan", Model: "x", Options: map[string]string{"k": "v"}}
	if got := Runs(asked, Offered{}, true); got != nil {
		t.Fatalf("first launch, nothing offered: %+v", got)
	}
	if got := Runs(asked, Offered{}, false); !reflect.DeepEqual(got, asked) {
		t.Fatalf("restore, nothing answered: %+v", got)
	}
}

func TestOfferedBy_ReadsTheAgentsAnswer(t *testing.T) {
	desc := "x"
	vals := sdk.SessionConfigSelectOptionsUngrouped{{Name: "Low", Value: "low"}, {Name: "High", Value: "high"}}
	opt := sdk.NewSessionConfigOptionSelect("low", sdk.SessionConfigSelectOptions{Ungrouped: &vals})
	opt.Select.Id, opt.Select.Name, opt.Select.Description = "effort", "Effort", &desc
	cat := sdk.SessionConfigOptionCategoryThoughtLevel
	opt.Select.Category = &cat
	off := OfferedBy(
		&sdk.SessionModeState{CurrentModeId: "ask", AvailableModes: []sdk.SessionMode{{Id: "ask"}, {Id: "code"}}},
		&Models{Current: "m1", Available: []string{"m1", "m2"}},
		[]sdk.SessionConfigOption{opt},
	)
	want := Offered{Modes: []string{"ask", "code"}, Mode: "ask", Models: []string{"m1", "m2"}, Model: "m1",
		Options: map[string]Option{"effort": {Current: "low", Values: []string{"low", "high"}, Category: "thought_level"}}}
	if !reflect.DeepEqual(off, want) {
		t.Fatalf("got %+v", off)
	}
	if none := OfferedBy(nil, nil, nil); none.Modes != nil || none.Models != nil || none.Options != nil {
		t.Fatalf("an agent that answers nothing offers nothing: %+v", none)
	}
}

func TestApplyAndReported(t *testing.T) {
	rec := &state.Setup{Mode: "ask", Options: map[string]string{"effort": "low"}, MCPServers: []string{"notes"}}
	got := Apply(rec, Change{Model: "m2", Options: map[string]string{"verbose": "true"}})
	want := &state.Setup{Model: "m2", Mode: "ask", Options: map[string]string{"effort": "low", "verbose": "true"}, MCPServers: []string{"notes"}}
	if !reflect.DeepEqual(got, want) || rec.Model != "" || len(rec.Options) != 1 {
		t.Fatalf("Apply: %+v (rec now %+v)", got, rec)
	}
	if Apply(nil, Change{}) != nil {
		t.Fatal("an empty change of no setup is no setup")
	}
	cases := []struct {
		name    string
		mode    string
		opts    map[string]Option
		want    *state.Setup
		changed bool
	}{
		{"the agent switched mode", "code", nil, &state.Setup{Mode: "code", Options: map[string]string{"effort": "low"}, MCPServers: []string{"notes"}}, true},
		{"the same mode again changes nothing", "ask", nil, rec, false},
		{"a recorded option changed", "", map[string]Option{"effort": {Current: "high"}, "other": {Current: "x"}}, &state.Setup{Mode: "ask", Options: map[string]string{"effort": "high"}, MCPServers: []string{"notes"}}, true},
		{"an option the record does not name stays the agent's", "", map[string]Option{"effort": {Current: "low"}, "other": {Current: "x"}}, rec, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed := Reported(rec, c.mode, c.opts)
			if changed != c.changed || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v", got, changed)
			}
		})
	}
}

func TestTurnSetupDiffers(t *testing.T) {
	code := &state.Setup{Mode: "code"}
	cases := []struct {
		name      string
		turn, now *state.Setup
		differs   bool
	}{
		{"not recorded (an older record)", nil, code, false},
		{"same setup", &state.Setup{Mode: "code"}, code, false},
		{"defaults both times", &state.Setup{}, nil, false},
		{"mode changed since the turn", &state.Setup{Mode: "ask"}, code, true},
		{"set after the turn ran under the defaults", &state.Setup{}, code, true},
		{"an MCP server was added", code, &state.Setup{Mode: "code", MCPServers: []string{"x"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why := TurnSetupDiffers(c.turn, c.now)
			if (why != "") != c.differs {
				t.Fatalf("TurnSetupDiffers = %q, want differs=%v", why, c.differs)
			}
		})
	}
	if why := TurnSetupDiffers(&state.Setup{Mode: "ask"}, code); !strings.Contains(why, "mode ask") || !strings.Contains(why, "mode code") {
		t.Fatalf("the reason does not name both: %q", why)
	}
}

func TestChangeItems_OneThingAtATimeInAFixedOrder(t *testing.T) {
	c := Change{Model: "m", Mode: "code", Options: map[string]string{"z": "1", "a": "2"}}
	var got []string
	for _, it := range c.Items() {
		got = append(got, Describe(Apply(nil, it)))
	}
	want := []string{Describe(&state.Setup{Mode: "code"}), Describe(&state.Setup{Model: "m"}),
		Describe(&state.Setup{Options: map[string]string{"a": "2"}}), Describe(&state.Setup{Options: map[string]string{"z": "1"}})}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len((Change{}).Items()) != 0 {
		t.Fatal("an empty change has items")
	}
}
