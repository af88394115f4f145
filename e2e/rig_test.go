package e2e_test

// The rigs of the scenario table (scenarios_test.go): each agent the table
// runs, real or built in, behind one interface, with what differs between
// agents as data. To add an agent to the table, give its rig the agentRig
// methods and add a row to agentRigs.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// agentRig is a world whose agent profile runs one agent, with a way to
// see what its model was sent and which of its processes still run.
type agentRig interface {
	World() *world
	// Agent is the profile name to start sessions with.
	Agent() string
	// Requests are the agent-loop requests its fake model received, in
	// order (none for an agent without a model).
	Requests() []modelRequest
	// Live are the pids of the rig's agent processes, and of session id's
	// if id is not "", still running.
	Live(id string) []int
}

// modelRequest is one request a fake model received, whatever its wire
// format.
type modelRequest struct {
	N       int      // the fake server's request number, which its answers quote ("ack N: ...")
	Path    string   // the URL path
	Users   []string // the user's own texts, in order
	Input   string   // the whole conversation, for searching
	Tools   []string // what the model was told of its tool calls, one entry a result
	Answers []string // the model's earlier answers; nil when the rig does not read them
	Session string   // the agent session the request names; "" when the wire names none
}

// rigRow is one agent of the table: its name (the subtest's), its traits,
// and how to open a rig; tool: the model asks for the proof command when a
// prompt says toolWord. Opening a real agent's rig installs it, behind the
// npm gate (requireNPMOptIn), and skips visibly when that is not possible.
type rigRow struct {
	name string
	rigTraits
	open func(t *testing.T, tool bool) agentRig
}

// toolOutcome is what follows a permission answer for the proof command.
type toolOutcome struct {
	status   string // the last tool_result's status; "" not checked
	recorded string // in the output kandev records for the call; "" not checked
	told     string // in the one tool result the model is sent; "" the model is not asked again
	answer   string // in the agent's answer after the call; "" not checked
	stop     string // the turn's stop reason
	// nextTurn: the agent ends the turn without asking the model again,
	// and the model is told with the next prompt.
	nextTurn bool
}

// rigTraits are how an agent differs in the scenarios.
type rigTraits struct {
	model      bool   // a fake model answers it; its requests are checked
	slowPrompt string // a prompt whose answer streams for several seconds, ending "nine ten"
	// replyShows is what the answer to prompt, as printed, contains.
	replyShows func(prompt string) string
	toolPrompt string // a prompt whose turn asks to run the proof command; "": no such scenario
	// modelCallIDs: the agent's tool call ids are its model's, so the
	// request that tells the model a call's outcome names it.
	modelCallIDs  bool
	oneToolResult bool   // the call gets exactly one tool_result event
	modelPath     string // the URL path of its model requests; "" not checked
	tokenPrefix   string // how its session ids (kandev's resume token) begin
	allow         toolOutcome
	deny          toolOutcome
	// restore is how a prompt in a new process restores the agent ("": the
	// agent cannot show it had the first turn, so the scenario does not apply).
	restore string
	usage   *reported // what its turns report of usage; nil not checked
	// beforeRestore runs before the prompt in a new process (Gemini's
	// load works only in a later minute).
	beforeRestore func(t *testing.T, evs []eventlog.Event)
	// emptyRestore is how a session never prompted is restored ("": the
	// scenario does not apply); emptyFallback, one of which the fallback's
	// reason names (none: no fallback).
	emptyRestore  string
	emptyFallback []string
	// killRestore is how resume restores the agent after its owner was
	// killed mid-turn; "": either way (Gemini's load or its fallback).
	killRestore string
	// keepsTurns: a restored agent sends the model each earlier prompt as
	// its own user message (not one resume context).
	keepsTurns bool
}

// proofCommand is the command the tool scenario's model asks to run.
const proofCommand = "echo ran > tool-proof.txt; echo TOOL-OUTPUT-42"

// ackReply is the fake model's answer, which quotes the prompt.
func ackReply(prompt string) string { return prompt }

// agentRigs are the rows of the scenario table.
var agentRigs = []rigRow{
	{name: "claude", open: func(t *testing.T, tool bool) agentRig {
		if tool {
			return newClaudeRig(t, "-tool-word", claudeToolWord, "-tool-command", claudeToolCmd)
		}
		return newClaudeRig(t)
	}, rigTraits: rigTraits{
		model: true, slowPrompt: claudeSlowPrompt, replyShows: ackReply, toolPrompt: "please " + claudeToolWord + " now", modelCallIDs: true,
		allow:   toolOutcome{recorded: "TOOL-OUTPUT-42", told: "TOOL-OUTPUT-42", answer: "TOOL-OUTPUT-42", stop: "end_turn"},
		deny:    toolOutcome{recorded: "User refused permission to run tool", told: "User refused permission to run tool", answer: "User refused permission to run tool", stop: "end_turn"},
		restore: "resume", usage: &reported{context: true, cost: true, tokens: true},
		emptyRestore: "new", emptyFallback: []string{"-32002"}, killRestore: "resume", keepsTurns: true,
	}},
	{name: "codex", open: func(t *testing.T, tool bool) agentRig {
		if tool {
			// Codex puts a command to the client when the model asks to run
			// it outside the sandbox, in a mode that asks (workspace-write).
			return newCodexRig(t, codexOptions{mode: "workspace-write", fakeArgs: []string{"-tool-word", codexToolWord, "-tool-escalate", "-tool-command", proofCommand}})
		}
		return newCodexRig(t, codexOptions{})
	}, rigTraits: rigTraits{
		model: true, slowPrompt: codexSlowPrompt, replyShows: ackReply, toolPrompt: "please " + codexToolWord + " now", modelCallIDs: true, modelPath: "/v1/responses",
		// codex-acp 2.x sends the command's output in the updates' _meta
		// (terminal_output_delta); kandev records it either way.
		allow: toolOutcome{status: "completed", recorded: "TOOL-OUTPUT-42", told: "TOOL-OUTPUT-42", answer: "TOOL-OUTPUT-42", stop: "end_turn"},
		// Its one reject option, "abort", ends the turn.
		deny:    toolOutcome{stop: "cancelled"},
		restore: "resume", usage: &reported{context: true, tokens: true},
		// codex-acp 0.16 answered -32002; 2.x says -32603 "no rollout found".
		emptyRestore: "new", emptyFallback: []string{"-32002", "no rollout found"}, killRestore: "resume", keepsTurns: true,
	}},
	{name: "gemini", open: func(t *testing.T, tool bool) agentRig {
		if tool {
			return newGeminiRig(t, "-tool-word", geminiToolWord, "-tool-command", geminiToolCmd)
		}
		return newGeminiRig(t)
	}, rigTraits: rigTraits{
		// A prompt seconds after the last may reach a fresh Gemini session
		// with the resume context (gemini_test.go): the answer quotes that.
		model: true, slowPrompt: geminiSlowPrompt, replyShows: func(string) string { return "ack " }, toolPrompt: "please " + geminiToolWord + " now", oneToolResult: true,
		allow: toolOutcome{status: "completed", told: "TOOL-OUTPUT-42", stop: "end_turn"},
		deny:  toolOutcome{told: "canceled by the user", stop: "end_turn"},
		// Gemini CLI 0.61 loads a session only in a later UTC minute than the
		// one it was created in (gemini_test.go has the same-minute case).
		restore: "load", beforeRestore: func(t *testing.T, evs []eventlog.Event) { waitForNextMinute(eventTime(t, evs[len(evs)-1])) },
	}},
	{name: "opencode", open: func(t *testing.T, tool bool) agentRig { return newOpenCodeRig(t) }, rigTraits: rigTraits{
		model: true, slowPrompt: openCodeSlowPrompt, replyShows: ackReply, toolPrompt: "please " + openCodeToolWord + " now", modelCallIDs: true, oneToolResult: true, tokenPrefix: "ses_",
		allow:   toolOutcome{status: "completed", told: "TOOL-OUTPUT-42", answer: "TOOL-OUTPUT-42", stop: "end_turn"},
		deny:    toolOutcome{status: "failed", told: "The user rejected permission", answer: "The user rejected permission", stop: "end_turn"},
		restore: "resume", usage: &reported{tokens: true},
		// OpenCode stores a session at session/new: it resumes natively.
		emptyRestore: "resume", killRestore: "resume", keepsTurns: true,
	}},
	{name: "copilot", open: func(t *testing.T, tool bool) agentRig { return newCopilotRig(t) }, rigTraits: rigTraits{
		model: true, slowPrompt: copilotSlowPrompt, replyShows: ackReply, toolPrompt: "please " + copilotToolWord + " now", modelCallIDs: true, oneToolResult: true,
		allow: toolOutcome{status: "completed", told: "TOOL-OUTPUT-42", stop: "end_turn"},
		// Refused, Copilot ends the turn; the model hears with the next prompt.
		deny:    toolOutcome{status: "failed", told: "The user rejected this tool call.", stop: "end_turn", nextTurn: true},
		restore: "load",
		// Copilot stores a session only once it has a turn.
		emptyRestore: "new", emptyFallback: []string{"session/load: -32002"}, killRestore: "load",
	}},
	{name: "demo", open: func(t *testing.T, tool bool) agentRig { return newDemoRig(t) }, rigTraits: demoTraits("resume")},
	{name: "demo-without-load-or-resume", open: func(t *testing.T, tool bool) agentRig {
		return newDemoRig(t, "--no-resume", "--no-load")
	}, rigTraits: demoTraits("new")},
	{name: "go-sdk-example", open: func(t *testing.T, tool bool) agentRig { return newExampleRig(t) }, rigTraits: rigTraits{
		slowPrompt:  "slowly count sheep one two three four five six seven eight nine ten",
		replyShows:  func(string) string { return "demo only (no AI model)" },
		killRestore: "new", // it can neither load nor resume
	}},
}

// demoTraits are the built-in demo agent's, restoring with restore.
func demoTraits(restore string) rigTraits {
	tr := rigTraits{
		slowPrompt: "/stream 5 count sheep one two three four five six seven eight nine ten",
		replyShows: func(p string) string { return "echo: " + p },
		toolPrompt: "/terminal " + proofCommand,
		allow:      toolOutcome{status: "completed", recorded: "exit 0: TOOL-OUTPUT-42", answer: "exit 0: TOOL-OUTPUT-42", stop: "end_turn"},
		deny:       toolOutcome{status: "failed", recorded: "Permission denied", answer: "was not run", stop: "end_turn"},
		restore:    restore, usage: &reported{context: true, cost: true},
		emptyRestore: restore, killRestore: restore,
	}
	if runtime.GOOS == "windows" {
		tr.toolPrompt = "" // the proof command is a POSIX shell's; cmd /c runs the demo's there
	}
	return tr
}

// demoRig is a world whose agent is kandev's built-in demo agent with
// flags, streaming slowly enough to be cut off; its processes carry a tag.
type demoRig struct {
	*world
	name, tag string
}

func newDemoRig(t *testing.T, flags ...string) *demoRig {
	t.Helper()
	r := &demoRig{world: newWorld(t), name: "demo-rig", tag: t.TempDir()}
	cmd := append([]string{kandevBin, "demo-agent", "--delay", "300"}, flags...)
	q, _ := json.Marshal(cmd)
	r.config(fmt.Sprintf("[agents.%s]\ncommand = %s\n[agents.%s.env]\nKANDEV_RIG_TAG = %q\n", r.name, q, r.name, r.tag))
	return r
}

func (r *demoRig) World() *world               { return r.world }
func (r *demoRig) Agent() string               { return r.name }
func (r *demoRig) Requests() []modelRequest    { return nil }
func (r *demoRig) Live(id string) []int        { return rigLive("KANDEV_RIG_TAG", r.tag, id) }
func (r *exampleRig) World() *world            { return r.world }
func (r *exampleRig) Agent() string            { return "example" }
func (r *exampleRig) Requests() []modelRequest { return nil }
func (r *exampleRig) Live(id string) []int     { return rigLive("KANDEV_RIG_TAG", r.tag, id) }

// exampleRig is a world whose agent is the ACP Go SDK's example agent: no
// model, a turn of about six seconds that asks to edit a file (refused by
// the rig's permission mode), no load or resume.
type exampleRig struct {
	*world
	tag string
}

func newExampleRig(t *testing.T) *exampleRig {
	t.Helper()
	r := &exampleRig{world: newWorld(t), tag: t.TempDir()}
	r.config(fmt.Sprintf("[permissions]\nmode = \"deny-all\"\n[agents.example]\ncommand = [%q]\n[agents.example.env]\nKANDEV_RIG_TAG = %q\n",
		buildExampleAgent(t), r.tag))
	return r
}

// rigLive are the live processes tagged key=value, and session id's.
func rigLive(key, value, id string) []int {
	live := liveProcessesWithEnv(key, value)
	if id != "" {
		live = append(live, liveProcessesWithEnv("KANDEV_SESSION_ID", id)...)
	}
	return live
}

// assertRigGone waits up to 10 s for every process of the rig, and of
// session id, to be gone.
func assertRigGone(t *testing.T, r agentRig, id, after string) {
	t.Helper()
	waitGone(t, r.Agent()+" processes", after, func() []int { return r.Live(id) })
}

// closeRig closes session id as a person does when done with it (kandev
// close ID: its warm owner and agent end), then asserts as assertRigGone.
func closeRig(t *testing.T, r agentRig, id, after string) {
	t.Helper()
	if res := r.World().run("close", id); res.code != 0 {
		t.Fatalf("close after %s: %s", after, res)
	}
	assertRigGone(t, r, id, after+" and the session was closed")
}

func (r *claudeRig) World() *world        { return r.world }
func (r *claudeRig) Agent() string        { return "claude" }
func (r *claudeRig) Live(id string) []int { return rigLive("CLAUDE_CONFIG_DIR", r.configDir, id) }
func (r *claudeRig) Requests() []modelRequest {
	var out []modelRequest
	for _, q := range r.requests() {
		out = append(out, modelRequest{N: q.N, Path: q.Path, Users: q.userTexts(), Input: q.input(), Tools: q.toolResults()})
	}
	return out
}

// toolResults are the tool_result blocks the request carries, as JSON.
func (q claudeRequest) toolResults() []string {
	var out []string
	for _, m := range q.Body.Messages {
		var blocks []json.RawMessage
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			var typ struct{ Type string }
			if json.Unmarshal(b, &typ) == nil && typ.Type == "tool_result" {
				out = append(out, string(b))
			}
		}
	}
	return out
}

func (r *codexRig) World() *world        { return r.world }
func (r *codexRig) Agent() string        { return "codex" }
func (r *codexRig) Live(id string) []int { return rigLive("CODEX_HOME", r.codexHome, id) }
func (r *codexRig) Requests() []modelRequest {
	var out []modelRequest
	for _, q := range r.requests() {
		if len(q.Body.Tools) == 0 {
			continue // a side request (a thread's title), not the agent loop's
		}
		m := modelRequest{N: q.N, Path: q.Path, Users: q.userTexts(), Input: q.input(), Session: q.SessionID}
		for _, it := range q.Body.Input {
			var typ struct{ Type string }
			if json.Unmarshal(it, &typ) == nil && typ.Type == "function_call_output" {
				m.Tools = append(m.Tools, string(it))
			}
		}
		out = append(out, m)
	}
	return out
}

func (r *geminiRig) World() *world        { return r.world }
func (r *geminiRig) Agent() string        { return geminiAgent }
func (r *geminiRig) Live(id string) []int { return rigLive("HOME", r.geminiHome, id) }
func (r *geminiRig) Requests() []modelRequest {
	var out []modelRequest
	for _, q := range r.requests() {
		m := modelRequest{N: q.N, Path: q.Path, Users: q.userTexts(), Input: q.input(), Answers: q.modelTexts()}
		if m.Answers == nil {
			m.Answers = []string{}
		}
		for _, c := range q.Body.Contents {
			for _, p := range c.Parts {
				if len(p.FunctionResponse) > 0 {
					m.Tools = append(m.Tools, string(p.FunctionResponse))
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func (r *chatAgent) World() *world        { return r.world }
func (r *chatAgent) Agent() string        { return r.name }
func (r *chatAgent) Live(id string) []int { return rigLive(r.tagKey, r.tagVal, id) }
func (r *chatAgent) Requests() []modelRequest {
	var out []modelRequest
	for _, q := range r.fake.turns() {
		out = append(out, modelRequest{N: q.N, Path: q.Path, Users: q.userTexts(), Input: q.input(), Tools: q.toolResults()})
	}
	return out
}

// streamingTurn holds when the turn for prompt has streamed agent text.
func streamingTurn(prompt string) func([]eventlog.Event) bool {
	return func(evs []eventlog.Event) bool {
		turn := ""
		for _, e := range evs {
			if e.Type == eventlog.EventUserMessage && e.Content == prompt {
				turn = e.TurnID
			}
			if turn != "" && e.Type == eventlog.EventAgentMessage && e.TurnID == turn {
				return true
			}
		}
		return false
	}
}

// proofFile is where the proof command writes.
func proofFile(w *world) string { return filepath.Join(w.cwd, "tool-proof.txt") }

// tailOf is the last words of an answer, which its printing shows
// unbroken (a tool call's lines may come between its first ones).
func tailOf(answer string) string {
	f := strings.Fields(answer)
	return strings.Join(f[max(0, len(f)-4):], " ")
}

// shows reports whether printed holds text, however the printing broke
// its lines (an agent may send one answer as several messages).
func shows(printed, text string) bool {
	return strings.Contains(strings.Join(strings.Fields(printed), " "), strings.Join(strings.Fields(text), " "))
}

// requestsDump renders model requests compactly for failure messages.
func requestsDump(reqs []modelRequest) string {
	var b strings.Builder
	for _, q := range reqs {
		fmt.Fprintf(&b, "#%d %s session=%q users=%q tools=%d\n", q.N, q.Path, q.Session, q.Users, len(q.Tools))
	}
	return b.String()
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// start60 is the fake server's echo of a user text: one line, 60 runes at most.
func start60(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60])
	}
	return s
}
