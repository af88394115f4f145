package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestStart_EachDirectiveOnTheDemoAgentIsLoggedInOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("the notes file\nsecond line\n"), 0o644)
	prompt := everyDirective(5)
	id, r := w.start("--permissions", "approve-all", prompt)
	if r.code != 0 {
		t.Fatal(r)
	}
	if !strings.Contains(r.stdout, "hello streaming world") || !strings.Contains(r.stdout, "[tool] Read notes.txt") {
		t.Fatalf("text output does not show the turn:\n%s", r.stdout)
	}
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	text := agentText(evs, "t1")
	for _, want := range []string{"I will remember PINEAPPLE", "hello streaming world", "echo: plain words", "chunk 4"} {
		if !strings.Contains(text, want) {
			t.Errorf("agent text lacks %q:\n%s", want, text)
		}
	}
	thought := ""
	for _, e := range ofType(evs, eventlog.EventAgentThought) {
		thought += e.Content
	}
	if thought != "pondering quietly" {
		t.Errorf("thought recorded as %q", thought)
	}
	results := ofType(evs, eventlog.EventToolResult)
	if len(results) != 2 || !strings.Contains(results[0].Content, "the notes file") || results[1].ToolStatus != "completed" {
		t.Fatalf("tool results: %+v", results)
	}
	if b, _ := os.ReadFile(filepath.Join(w.cwd, "out.txt")); string(b) != "written by the agent" {
		t.Fatalf("out.txt = %q", b)
	}
	if len(ofType(evs, eventlog.EventPermissionRequest)) != 1 || len(ofType(evs, eventlog.EventPermissionResolved)) != 1 {
		t.Fatal("permission request and answer not both logged")
	}
	// The order of one turn: started, user message, ..., ended, then idle;
	// the agent exits when its warm owner is closed.
	w.mustRun("close", id)
	evs = w.events(id)
	kinds := []string{}
	for _, e := range evs {
		kinds = append(kinds, e.Type)
	}
	order := strings.Join(kinds, " ")
	for _, seq := range []string{"agent_started", "turn_started user_message", "tool_call", "permission_requested", "permission_resolved", "turn_ended state agent_exited"} {
		if !strings.Contains(order, seq) {
			t.Errorf("log order lacks %q: %s", seq, order)
		}
	}
	if s := w.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" || s.ResumeToken == "" {
		t.Fatalf("record after the turn: %+v", s)
	}
}

func TestStart_DenyAllRefusesTheWrite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("--permissions", "deny-all", "/write out.txt nope")
	if r.code != 0 {
		t.Fatal(r)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("the file was written although permission was denied")
	}
	res := ofType(w.events(id), eventlog.EventToolResult)
	if len(res) != 1 || res[0].ToolStatus != "failed" {
		t.Fatalf("tool result: %+v", res)
	}
}

func TestStart_FileAccessOutsideTheCwdIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(secret, []byte("outside"), 0o644)
	os.Symlink(secret, filepath.Join(w.cwd, "link.txt"))
	id, r := w.start("/read " + secret + "\n/read link.txt")
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, res := range ofType(w.events(id), eventlog.EventToolResult) {
		if res.ToolStatus != "failed" || strings.Contains(res.Content, "outside") && !strings.Contains(res.Content, "outside the session") {
			t.Fatalf("read outside the cwd was served: %+v", res)
		}
	}
}

func TestStart_BulkTurnOf100000ChunksKeepsTheConnection(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("--json", "/bulk 100000")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	if n := len(ofType(evs, eventlog.EventAgentMessage)); n != 100000 {
		t.Fatalf("got %d message chunks, want 100000", n)
	}
	if s := w.session(id); s.StopReason != "end_turn" {
		t.Fatalf("stop reason %q", s.StopReason)
	}
	// --json streams the log's own lines and ends with the session object.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	decodeJSON(t, lines[len(lines)-1], &last)
	// Every event of the log, wherever the owner ran (a command following a
	// detached owner shows the state its turn_ended leaves too).
	if last.ID != id || last.State != state.StateWaitingForInput || len(lines) != len(evs)+1 {
		t.Fatalf("json stream: %d lines for %d events, last %s", len(lines), len(evs), lines[len(lines)-1])
	}
}

func TestStart_WithoutPromptBootsAndWaits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start()
	if r.code != 0 {
		t.Fatal(r)
	}
	s := w.session(id)
	if s.State != state.StateWaitingForInput || s.ResumeToken == "" || s.Workspace != filepath.Base(w.cwd) {
		t.Fatalf("%+v", s)
	}
}

func TestAgentFailures_EndTheTurnWithExit6AndALogThatSaysWhy(t *testing.T) {
	t.Parallel()
	garbage := writeScript(t, "garbage-agent", "echo 'Welcome to my agent!'\nsleep 30\n")
	silent := writeScript(t, "silent-agent", "sleep 30\n")
	cases := []struct {
		name    string
		command string
		prompt  string
		want    string
	}{
		{"not installed", `["kandev-no-such-agent-xyz"]`, "hi", "not found on PATH"},
		{"prints garbage", `["` + garbage + `"]`, "hi", "non-JSON"},
		{"never answers initialize", `["` + silent + `"]`, "hi", "did not answer initialize"},
		{"dies mid-turn", `["` + kandevBin + `", "demo-agent"]`, "/say before\n/crash", "agent process"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.config("[agent]\nhandshake_timeout_seconds = 2\n[agents.x]\ncommand = " + tc.command + "\ninstall_hint = \"install x from its site\"\n")
			id, r := w.start("--agent", "x", tc.prompt)
			if r.code != 6 {
				t.Fatalf("exit %d, want 6\n%s", r.code, r)
			}
			if !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 3 {
				t.Fatalf("stderr does not say %q in a line:\n%s", tc.want, r.stderr)
			}
			evs := w.events(id)
			assertNoSeqGap(t, evs)
			markers := ofType(evs, eventlog.EventMarker)
			if len(markers) == 0 || markers[len(markers)-1].Severity != "error" {
				t.Fatalf("no error marker in the log: %+v", evs)
			}
			if tc.name == "not installed" && !strings.Contains(r.stderr, "install x from its site") {
				t.Fatalf("no install hint: %s", r.stderr)
			}
			if tc.name == "dies mid-turn" {
				if s := w.session(id); s.StopReason != "process_exit" || s.State != state.StateWaitingForInput {
					t.Fatalf("record: %+v", s)
				}
				if !strings.Contains(agentText(evs, ""), "before") {
					t.Fatal("text streamed before the crash was lost")
				}
			}
		})
	}
}

func TestEvents_ReportTornAndCorruptLinesButShowTheRest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: the log is damaged by hand, which no live owner expects.
	id, r := w.start("--linger", "0", "/say one")
	if r.code != 0 {
		t.Fatal(r)
	}
	n := len(w.events(id))
	path := filepath.Join(w.home, "sessions", id+".jsonl")
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	// Garbage in the middle and a torn last line.
	mangled := strings.Join(lines[:2], "") + "garbage line\n" + strings.Join(lines[2:], "") + `{"seq":99,"ty`
	os.WriteFile(path, []byte(mangled), 0o600)
	r = w.run("events", id, "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "torn") {
		t.Fatalf("%s", r)
	}
	var out struct{ Events []eventlog.Event }
	decodeJSON(t, r.stdout, &out)
	if len(out.Events) != n {
		t.Fatalf("got %d events, want %d", len(out.Events), n)
	}
	// The next owner truncates the torn line and keeps the sequence going.
	if r := w.run("prompt", id, "/say two"); r.code != 0 {
		t.Fatal(r)
	}
	evs, rep, _ := eventlog.ReadAll(path)
	if rep.TornBytes != 0 || len(rep.CorruptLines) != 1 || evs[len(evs)-1].Seq != int64(len(evs)) {
		t.Fatalf("after prompt: report %+v, last seq %d of %d", rep, evs[len(evs)-1].Seq, len(evs))
	}
}

func TestSessionIDs_InvalidUnknownAndAmbiguous(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, _ := w.start()
	b, _ := w.start()
	common := ""
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			break
		}
		common = a[:i+1]
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"status", "../x"}, 2},
		{[]string{"status", "a/b"}, 2},
		{[]string{"status", "nosuchsession"}, 4},
		{[]string{"prompt", "nosuchsession", "hi"}, 4},
		{[]string{"status", common}, 2},
		{[]string{"status", a}, 0},
		{[]string{"status"}, 2},
		{[]string{"list", "--limit", "-1"}, 2},
		{[]string{"start", "--agent", "nosuchagent", "hi"}, 4},
		{[]string{"--permissions", "sometimes", "start", "hi"}, 2},
		{[]string{"frobnicate"}, 2},
	}
	for _, tc := range cases {
		r := w.run(tc.args...)
		if r.code != tc.code {
			t.Errorf("kandev %v: exit %d, want %d\n%s", tc.args, r.code, tc.code, r)
		}
		if tc.code != 0 && (r.stderr == "" || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1) {
			t.Errorf("kandev %v: want a one-line error, got %q", tc.args, r.stderr)
		}
	}
	r := w.run("--json", "status", "nosuchsession")
	var e struct {
		Error struct{ Code, Message string }
	}
	decodeJSON(t, r.stdout, &e)
	if e.Error.Code != "not_found" || e.Error.Message == "" {
		t.Fatalf("json error: %s", r.stdout)
	}
}

func TestListStatusDoneArchive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, _ := w.start("--title", "first", "/say a")
	b, _ := w.start("--workspace", "other", "/say b")
	var l struct {
		Sessions []struct {
			ID, Badge, Workspace string
		}
	}
	decodeJSON(t, w.mustRun("--json", "list").stdout, &l)
	if len(l.Sessions) != 2 || l.Sessions[0].ID != b || l.Sessions[1].ID != a || l.Sessions[0].Badge != "idle" {
		t.Fatalf("list: %+v", l)
	}
	decodeJSON(t, w.mustRun("--json", "list", "--workspace", "other").stdout, &l)
	if len(l.Sessions) != 1 || l.Sessions[0].ID != b {
		t.Fatalf("list --workspace: %+v", l)
	}
	w.mustRun("done", a)
	w.mustRun("archive", b)
	decodeJSON(t, w.mustRun("--json", "list", "--state", "COMPLETED").stdout, &l)
	if len(l.Sessions) != 1 || l.Sessions[0].ID != a || l.Sessions[0].Badge != "done" {
		t.Fatalf("list --state: %+v", l)
	}
	var st struct {
		Session struct{ State string }
		Status  struct {
			Badge, Reason string
			IsResumable   bool `json:"is_resumable"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "status", b).stdout, &st)
	if st.Session.State != "CANCELLED" || st.Status.Badge != "cancelled" || st.Status.Reason != "terminal" || st.Status.IsResumable {
		t.Fatalf("status: %+v", st)
	}
	if r := w.run("prompt", a, "hi"); r.code != 5 || !strings.Contains(r.stderr, "--parent") {
		t.Fatalf("prompt on a done session: %s", r)
	}
}

func TestAgents_ListsBuiltInProfilesWithInstallHints(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var out struct {
		Agents []struct {
			Name        string
			Installed   bool
			InstallHint string `json:"install_hint"`
			Command     []string
		}
	}
	decodeJSON(t, w.mustRun("--json", "agents").stdout, &out)
	names := map[string]bool{}
	for _, a := range out.Agents {
		names[a.Name] = true
		if a.InstallHint == "" || len(a.Command) == 0 {
			t.Errorf("profile %s lacks a command or install hint", a.Name)
		}
		if a.Name == "demo" && !a.Installed {
			t.Error("the demo agent is built in and must be installed")
		}
	}
	for _, n := range []string{"claude", "codex", "copilot", "gemini", "opencode", "auggie", "amp", "demo"} {
		if !names[n] {
			t.Errorf("no built-in profile %s", n)
		}
	}
	r := w.mustRun("--json", "agents", "--probe")
	if !strings.Contains(r.stdout, "kandev-demo-agent") {
		t.Fatalf("probe did not report the demo agent's info: %s", r.stdout)
	}
}

// buildExampleAgent builds the ACP Go SDK's example agent (the version in go.mod).
func buildExampleAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "example-agent")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/coder/acp-go-sdk/example/agent").CombinedOutput()
	if err != nil {
		t.Fatalf("building the SDK example agent: %v\n%s", err, out)
	}
	return bin
}

// installTSExampleAgent installs the TypeScript ACP SDK (which ships an
// example agent) into a cache folder once; it skips, visibly, without node.
func installTSExampleAgent(t *testing.T) []string {
	t.Helper()
	requireNPMOptIn(t, "the TypeScript ACP SDK example agent")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed; the TypeScript ACP example agent cannot run here")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("SKIP: npm is not installed; cannot install @agentclientprotocol/sdk")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "kandev-test", "ts-acp-sdk-1.9.0")
	agent := filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "dist", "examples", "agent.js")
	if _, err := os.Stat(agent); err != nil {
		os.MkdirAll(dir, 0o755)
		out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "@agentclientprotocol/sdk@1.9.0").CombinedOutput()
		if err != nil {
			t.Fatalf("npm install @agentclientprotocol/sdk@1.9.0: %v\n%s", err, out)
		}
	}
	return []string{node, agent}
}

func TestInterop_ExampleAgentsUnderApproveAllAndDenyAll(t *testing.T) {
	t.Parallel()
	agents := map[string]func(*testing.T) []string{
		"go-sdk": func(t *testing.T) []string { return []string{buildExampleAgent(t)} },
		"ts-sdk": installTSExampleAgent,
	}
	for name, install := range agents {
		t.Run(name, func(t *testing.T) {
			command := install(t)
			quoted := make([]string, len(command))
			for i, c := range command {
				quoted[i] = `"` + c + `"`
			}
			for _, mode := range []string{"approve-all", "deny-all"} {
				t.Run(mode, func(t *testing.T) {
					t.Parallel()
					w := newWorld(t)
					w.config("[agents.example]\ncommand = [" + strings.Join(quoted, ", ") + "]\n")
					id, r := w.start("--agent", "example", "--permissions", mode, "please change the config")
					if r.code != 0 {
						t.Fatal(r)
					}
					evs := w.events(id)
					assertNoSeqGap(t, evs)
					if s := w.session(id); s.StopReason != "end_turn" {
						t.Fatalf("stop reason %q", s.StopReason)
					}
					calls := ofType(evs, eventlog.EventToolCall)
					results := ofType(evs, eventlog.EventToolResult)
					if len(calls) < 2 || len(results) < 1 || results[0].ToolCallID != "call_1" {
						t.Fatalf("tool calls %+v results %+v", calls, results)
					}
					resolved := ofType(evs, eventlog.EventPermissionResolved)
					if len(resolved) != 1 {
						t.Fatalf("permission answers: %+v", resolved)
					}
					text := agentText(evs, "")
					if mode == "approve-all" && (!strings.Contains(resolved[0].Content, "allow") || !strings.Contains(text, "successfully updated")) {
						t.Fatalf("approve-all: %s / %s", resolved[0].Content, text)
					}
					if mode == "deny-all" && (!strings.Contains(resolved[0].Content, "reject") || !strings.Contains(text, "skip the configuration update")) {
						t.Fatalf("deny-all: %s / %s", resolved[0].Content, text)
					}
				})
			}
		})
	}
}

func TestDemo_TellsTheWholeStoryAndExitsZero(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.run("demo")
	if r.code != 0 {
		t.Fatalf("kandev demo: %s", r)
	}
	for _, want := range []string{"[1/6]", "needs-resume", `restore method "resume"`, "1 continuation turn sent", "PINEAPPLE", "[6/6]", "Every step did what it said"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestQuiet_PrintsOnlyTheFinalAssistantText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// start -q prints only the new session's id; prompt -q only the answer.
	id := strings.TrimSpace(w.mustRun("-q", "start").stdout)
	r := w.mustRun("-q", "prompt", id, "/say first part\n/read missing.txt\n/say final words")
	if strings.Contains(r.stdout, "[tool]") || !strings.Contains(r.stdout, "final words") || strings.Count(strings.TrimSpace(r.stdout), "\n") > 3 {
		t.Fatalf("quiet output:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Fatalf("quiet mode wrote to stderr: %q", r.stderr)
	}
}
