package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

var updateReadGoldens = flag.Bool("update-read-goldens", false, "rewrite history/testdata/e2e/*.golden from the transcript and recap tests")

// readGolden compares got with history/testdata/e2e/name (-update-read-goldens rewrites it).
func readGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "history", "testdata", "e2e", name)
	if *updateReadGoldens {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test . -run %s -update-read-goldens)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// normalizer replaces what changes from run to run (ids, times, pids, temp
// paths, the agent's session token) with fixed words.
type readNormalizer struct{ replace []string }

func (w *world) readNormalizer(id string) readNormalizer {
	return readNormalizer{replace: []string{id, "<session>", w.cwd, "<cwd>", w.home, "<home>", kandevBin, "<kandev>",
		"workspace " + filepath.Base(w.cwd), "workspace <workspace>"}}
}

// json normalizes a JSON document and indents it.
func (n readNormalizer) json(t *testing.T, s string) []byte {
	t.Helper()
	var v any
	decodeJSON(t, s, &v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(n.value("", v)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (n readNormalizer) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = n.value(k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.value(key, e)
		}
		return x
	case float64:
		switch key {
		case "pid", "agent_pid", "owner_pid":
			return 0
		case "used": // words the demo agent holds: a killed turn's chunks are saved or not, by timing
			return 0
		}
		return x
	case string:
		switch {
		case x == "":
			return x
		case key == "resume_token", key == "token":
			return "<token>"
		case key == "workspace":
			return "<workspace>"
		case key == "agent_start":
			return "<start>"
		}
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "<time>"
		}
		return n.text(x)
	}
	return v
}

func (n readNormalizer) text(s string) string {
	return strings.NewReplacer(n.replace...).Replace(s)
}

// killWhen runs kandev in the background and SIGKILLs it once the session's
// log has an event that matches (the agent dies with it: its supervisor sees the owner go).
func (w *world) killWhen(id string, match func(eventlog.Event) bool, args ...string) {
	w.t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		evs, _, _ := eventlog.ReadAll(filepath.Join(w.home, "sessions", id+".jsonl"))
		for _, e := range evs {
			if match(e) {
				return
			}
		}
	}
	w.t.Fatalf("kandev %v: the awaited event never came", args)
}

// demoEveryDirective is a session on the demo agent that used every
// directive but /crash (whose last chunks and the failure marker race: see
// TestRedaction), was recalled in a second turn, had its owner killed in a
// third, and was resumed (repair, then one continuation).
func demoEveryDirective(t *testing.T) (*world, string) {
	w := newWorld(t)
	// The goldens are one fixed story (each turn owned by its command, the
	// kill of that owner): no warm owner adds or reorders events.
	w.underCI()
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("the notes file\nsecond line\n"), 0o644)
	prompt := everyDirective(3)
	id, r := w.start("--permissions", "approve-all", prompt)
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "recall")
	// Killed once the agent has said all it will before sleeping, so the log
	// is the same every run; the continuation quotes the request.
	w.killWhen(id, func(e eventlog.Event) bool {
		return e.TurnID == "t3" && e.Type == eventlog.EventAgentMessage && strings.HasSuffix(e.Content, "it")
	}, "prompt", id, "/say working on it\n/sleep 30000")
	if r := w.run("resume", id); r.code != 0 {
		t.Fatal(r)
	}
	return w, id
}

func TestTranscriptAndRecap_DemoAgentEveryDirectiveMatchesTheGoldens(t *testing.T) {
	t.Parallel()
	w, id := demoEveryDirective(t)
	n := w.readNormalizer(id)
	readGolden(t, "demo.transcript.json", n.json(t, w.mustRun("--json", "transcript", id).stdout))
	readGolden(t, "demo.transcript.txt", []byte(n.text(w.mustRun("transcript", id).stdout)))
	readGolden(t, "demo.recap.json", n.json(t, w.mustRun("--json", "recap", id, "--limit", "4").stdout))
	readGolden(t, "demo.recap.txt", []byte(n.text(w.mustRun("recap", id, "--limit", "4").stdout)))

	// Paging back two entries at a time visits every entry of the whole
	// transcript once, in order.
	assertPagesCoverTheTranscript(t, w, id, 2)

	// The same stored events give the same recap, but for generated_at:
	// again (now read back to the cached digest), and without the digest.
	first := recapWithoutClock(t, w, id)
	if again := recapWithoutClock(t, w, id); again != first {
		t.Fatalf("a second recap differs:\n%s\n%s", again, first)
	}
	os.Remove(filepath.Join(w.home, "sessions", id+".digest"))
	if fresh := recapWithoutClock(t, w, id); fresh != first {
		t.Fatalf("the recap without the digest differs:\n%s\n%s", fresh, first)
	}
}

func TestTranscriptAndRecap_GoSDKExampleAgentTurnMatchesTheGoldens(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.underCI() // the goldens are of a log whose agent exited with its command
	w.config("[agents.example]\ncommand = [\"" + buildExampleAgent(t) + "\"]\n")
	id, r := w.start("--agent", "example", "--permissions", "approve-all", "please change the config")
	if r.code != 0 {
		t.Fatal(r)
	}
	n := w.readNormalizer(id)
	readGolden(t, "example.transcript.json", n.json(t, w.mustRun("--json", "transcript", id).stdout))
	readGolden(t, "example.transcript.txt", []byte(n.text(w.mustRun("transcript", id).stdout)))
	recap := w.mustRun("--json", "recap", id).stdout
	recap = strings.ReplaceAll(recap, w.session(id).AgentCommand[0], "<example-agent>")
	readGolden(t, "example.recap.json", n.json(t, recap))
	assertPagesCoverTheTranscript(t, w, id, 1)
}

// recapWithoutClock is kandev recap --json with generated_at blanked.
func recapWithoutClock(t *testing.T, w *world, id string) string {
	t.Helper()
	out := w.mustRun("--json", "recap", id).stdout
	i := strings.Index(out, `"generated_at":"`)
	if i < 0 {
		t.Fatalf("no generated_at: %s", out)
	}
	j := strings.IndexByte(out[i+len(`"generated_at":"`):], '"')
	return out[:i] + out[i+len(`"generated_at":"`)+j:]
}

type readPage struct {
	Entries  []history.Entry `json:"entries"`
	HasOlder bool            `json:"has_older"`
	Next     int64           `json:"next_before_sequence"`
	Limit    int             `json:"limit"`
}

// assertPagesCoverTheTranscript follows next_before_sequence from the newest
// page to the oldest and checks the entries, put back in order, are the
// transcript of the whole log, each once.
func assertPagesCoverTheTranscript(t *testing.T, w *world, id string, limit int) {
	t.Helper()
	var pages [][]history.Entry
	before := int64(0)
	for i := 0; ; i++ {
		var p readPage
		decodeJSON(t, w.mustRun("--json", "transcript", id, "--limit", fmt.Sprint(limit), "--before", fmt.Sprint(before)).stdout, &p)
		if len(p.Entries) > limit || p.Limit != limit || p.HasOlder != (p.Next > 0) || (p.HasOlder && p.Next != p.Entries[0].StartSequence) {
			t.Fatalf("page %d (before %d): %+v", i, before, p)
		}
		pages = append(pages, p.Entries)
		if !p.HasOlder {
			break
		}
		before = p.Next
	}
	var got []history.Entry
	for i := len(pages) - 1; i >= 0; i-- {
		got = append(got, pages[i]...)
	}
	evs := w.events(id)
	for i := range evs {
		history.RedactEvent(&evs[i])
	}
	want := history.Assemble(evs)
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("paging by %d gave:\n%s\nthe whole transcript is:\n%s", limit, gotJSON, wantJSON)
	}
}

// writeMillionEventSession writes a session whose log has n events in the
// docs/event-log.md format: turns of ten events (question; answer in two chunks, a tool
// call and its result, a last chunk), with a provider_failure marker after
// turn 5 (pending for good), an unhealthy marker after turn 7 resolved by a
// recovered one after turn 9, and a prompt_timeout after the second to last
// turn (pending). It returns the number of turns.
func writeMillionEventSession(t *testing.T, home, id string, n int) int {
	t.Helper()
	h, err := state.OpenHome(home)
	if err != nil {
		t.Fatal(err)
	}
	turns := (n - 4) / 10
	markers := map[int]eventlog.Event{
		5:         history.NewMarker(history.MarkerProviderFailure, "The agent failed the turn: 529 overloaded", ""),
		7:         history.NewMarker(history.MarkerSessionUnhealthy, "The agent stopped answering", ""),
		9:         history.NewMarker(history.MarkerSessionRecovered, "The agent answers again", ""),
		turns - 1: history.NewMarker(history.MarkerPromptTimeout, "The agent sent nothing for 10m0s; kandev stopped it.", ""),
	}
	f, err := os.Create(h.LogPath(id))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	seq := int64(0)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(e eventlog.Event) {
		seq++
		e.Seq, e.SessionID, e.Timestamp = seq, id, eventlog.FormatTime(base.Add(time.Duration(seq)*time.Millisecond))
		b, _ := json.Marshal(e)
		bw.Write(append(b, '\n'))
	}
	for i := 1; i <= turns; i++ {
		turn, call := fmt.Sprint("t", i), fmt.Sprint("call-", i)
		for _, e := range []eventlog.Event{
			{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser},
			{Type: eventlog.EventUserMessage, TurnID: turn, Role: "user", Content: fmt.Sprintf("question %d", i)},
			{Type: eventlog.EventState, TurnID: turn, State: state.StateRunning},
			{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d part 1. ", i)},
			{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d part 2. ", i)},
			{Type: eventlog.EventToolCall, TurnID: turn, ToolCallID: call, ToolName: "Read state/log.go", ToolStatus: "pending", Input: json.RawMessage(`{"path":"state/log.go"}`)},
			{Type: eventlog.EventToolResult, TurnID: turn, ToolCallID: call, ToolName: "Read state/log.go", ToolStatus: "completed", Content: "package state"},
			{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("answer %d done.", i)},
			{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopEndTurn},
			{Type: eventlog.EventState, TurnID: turn, State: state.StateWaitingForInput},
		} {
			write(e)
		}
		if m, ok := markers[i]; ok {
			m.TurnID = turn
			write(m)
		}
	}
	for seq < int64(n) {
		write(eventlog.Event{Type: eventlog.EventAgentExited, Content: "exited with status 0", PID: 4242})
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := &state.Session{ID: id, TaskID: id, Title: "a million events", Workspace: "synthetic", Cwd: home, Agent: "demo",
		State: state.StateWaitingForInput, StopReason: eventlog.StopEndTurn, CreatedAt: base, LastActivityAt: base, AgentLaunched: true, Turns: turns}
	if err := h.CreateSession(s); err != nil {
		t.Fatal(err)
	}
	return turns
}

func TestTranscriptAndRecap_OnAMillionEventLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const id = "20260102-030405-million"
	turns := writeMillionEventSession(t, w.home, id, 1_000_000)
	if evs, _, _ := eventlog.ReadLast(filepath.Join(w.home, "sessions", id+".jsonl"), 1, nil); len(evs) != 1 || evs[0].Seq != 1_000_000 {
		t.Fatalf("the synthetic log ends with %+v", evs)
	}

	// The newest page: the second to last turn, the timeout marker, the last turn.
	var p readPage
	decodeJSON(t, w.mustRun("--json", "transcript", id, "--limit", "5").stdout, &p)
	if len(p.Entries) != 5 || !p.HasOlder || p.Next != p.Entries[0].StartSequence {
		t.Fatalf("last page: %+v", p)
	}
	roles := []string{}
	for _, e := range p.Entries {
		roles = append(roles, e.Message.Role)
	}
	last := p.Entries[4].Message
	if strings.Join(roles, " ") != "user assistant system user assistant" ||
		p.Entries[0].Message.Parts[0].Text != fmt.Sprintf("question %d", turns-1) ||
		p.Entries[2].Message.Parts[0].Kind != "prompt_timeout" ||
		p.Entries[3].Message.Parts[0].Text != fmt.Sprintf("question %d", turns) ||
		len(last.Parts) != 3 || last.Parts[0].Text != fmt.Sprintf("answer %d part 1. answer %d part 2. ", turns, turns) ||
		last.Parts[1].State != history.ToolOutputAvailable || last.Parts[2].Text != fmt.Sprintf("answer %d done.", turns) {
		t.Fatalf("last page: %s", w.mustRun("--json", "transcript", id, "--limit", "5").stdout)
	}
	// The page before it ends where this one starts.
	var older readPage
	decodeJSON(t, w.mustRun("--json", "transcript", id, "--limit", "2", "--before", fmt.Sprint(p.Next)).stdout, &older)
	if len(older.Entries) != 2 || older.Entries[1].Message.Role != history.RoleAssistant ||
		older.Entries[0].Message.Parts[0].Text != fmt.Sprintf("question %d", turns-2) {
		t.Fatalf("readPage before %d: %+v", p.Next, older)
	}

	var out struct{ Recap history.Recap }
	cold := recapWithoutClock(t, w, id) // reads the whole log once and caches its digest
	decodeJSON(t, w.mustRun("--json", "recap", id).stdout, &out)
	r := out.Recap
	kinds := []string{}
	for _, m := range r.PendingMarkers {
		kinds = append(kinds, m.Kind)
	}
	if len(r.RecentMessages) != 20 || r.OmittedMessages != 2*turns-20 || strings.Join(kinds, " ") != "provider_failure prompt_timeout" ||
		len(r.RecentMarkers) != 4 || r.Snapshot.EventCursor != 1_000_000 || r.Snapshot.Consistency != "persisted_reads" ||
		r.RecentMessages[19].Message.Parts[2].Text != fmt.Sprintf("answer %d done.", turns) || r.Session.ID != id {
		t.Fatalf("recap: %+v", r)
	}
	if warm := recapWithoutClock(t, w, id); warm != cold {
		t.Fatalf("the recap read back to the digest differs from the one that read the whole log")
	}
}

func TestTranscriptAndRecap_RefuseLimitsOutOfRange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("hello")
	for _, args := range [][]string{
		{"transcript", id, "--limit", "0"},
		{"transcript", id, "--limit", "1001"},
		{"transcript", id, "--before", "-1"},
		{"recap", id, "--limit", "0"},
		{"recap", id, "--limit", "101"},
	} {
		if r := w.run(args...); r.code != 2 || !strings.Contains(r.stderr, "--") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("kandev %v: want one usage line and exit 2, got %s", args, r)
		}
	}
	if r := w.run("transcript", id, "--limit", "1000"); r.code != 0 {
		t.Errorf("--limit 1000: %s", r)
	}
}

// plantedSecrets are real-looking fake secrets, built at run time so that
// no scanner flags this file.
func plantedSecrets() map[string]string {
	return map[string]string{
		"openai":   "sk-" + strings.Repeat("a1B2", 10),
		"github":   "ghp_" + strings.Repeat("Z9y8", 9),
		"aws":      "AKIA" + strings.Repeat("Q7", 8),
		"bearer":   "tk" + strings.Repeat("x9Yq", 8),
		"api_key":  "kv" + strings.Repeat("7Qe", 8),
		"userinfo": "pw" + strings.Repeat("Xy3", 6),
	}
}

// secretLines are lines that carry every planted secret in its usual setting.
func secretLines(s map[string]string) []string {
	return []string{
		"export OPENAI_KEY_VALUE " + s["openai"],
		"token for ci: " + s["github"],
		"aws id " + s["aws"],
		"Authorization: Bearer " + s["bearer"],
		"api_key=" + s["api_key"],
		"git clone https://deploy:" + s["userinfo"] + "@git.example.com/repo.git",
	}
}

func TestRedaction_PlantedSecretsAppearNowhereKandevWritesOrPrints(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secrets := plantedSecrets()
	lines := secretLines(secrets)
	os.WriteFile(filepath.Join(w.cwd, "creds.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	// In a prompt (the demo agent echoes each line back) and in tool output.
	id, r := w.start(strings.Join(append(lines, "/read creds.txt"), "\n"))
	if r.code != 0 {
		t.Fatal(r)
	}
	// In agent stderr: an agent that prints them there and then crashes
	// mid-turn; the stderr tail becomes the failure marker's diagnostic.
	wrapper := writeScript(t, "leaky-agent", "printf '%s\\n' "+readShellQuote(lines)+" >&2\nexec "+kandevBin+" demo-agent\n")
	w.config("[agents.leaky]\ncommand = [\"" + wrapper + "\"]\n")
	leaky, r := w.start("--agent", "leaky", "/say about to fail\n/crash")
	if r.code != 6 {
		t.Fatalf("the crashing agent: %s", r)
	}
	markers := ofType(w.events(leaky), eventlog.EventMarker)
	if len(markers) == 0 || !strings.Contains(markers[len(markers)-1].Diagnostic, history.Redacted) {
		t.Fatalf("the failure marker does not carry the (redacted) stderr: %+v", markers)
	}

	exported := filepath.Join(t.TempDir(), "bundle.jsonl")
	for _, sid := range []string{id, leaky} {
		outputs := map[string]string{}
		log, _ := os.ReadFile(filepath.Join(w.home, "sessions", sid+".jsonl"))
		outputs["log file"] = string(log)
		for name, args := range map[string][]string{
			"transcript":      {"--json", "transcript", sid},
			"transcript text": {"transcript", sid},
			"recap":           {"--json", "recap", sid},
			"recap text":      {"recap", sid},
			"events":          {"--json", "events", sid},
			"events text":     {"events", sid},
			"export":          {"export", sid},
		} {
			outputs[name] = w.mustRun(args...).stdout
		}
		os.WriteFile(exported, []byte(outputs["export"]), 0o600)
		imported := strings.SplitN(w.mustRun("import", exported).stdout, "\n", 2)[0]
		outputs["imported log"] = string(readMust(os.ReadFile(filepath.Join(w.home, "sessions", imported+".jsonl"))))
		outputs["imported recap"] = w.mustRun("--json", "recap", imported).stdout
		for what, out := range outputs {
			for name, secret := range secrets {
				if strings.Contains(out, secret) {
					t.Errorf("session %s: the %s secret appears in the %s", sid, name, what)
				}
			}
		}
		if !strings.Contains(outputs["events"], history.Redacted) || !strings.Contains(outputs["export"], history.Redacted) {
			t.Errorf("session %s: nothing was redacted in the events or the export (were the secrets planted?)", sid)
		}
	}
	// The echo and the tool output are there, with the secrets cut out.
	tr := w.mustRun("transcript", id).stdout
	for _, want := range []string{"echo: api_key=" + history.Redacted, "Authorization: " + history.Redacted, "https://" + history.Redacted + "@git.example.com"} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
}

func readMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func readShellQuote(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func TestExportImport_RoundTripGivesTheSameTranscript(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("remember MANGO\n/say the first turn")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "/read nothing-here.txt")
	bundle := w.mustRun("export", id).stdout
	lines := strings.Split(strings.TrimSuffix(bundle, "\n"), "\n")
	var head struct {
		Version int           `json:"kandev_bundle"`
		Session state.Session `json:"session"`
	}
	decodeJSON(t, lines[0], &head)
	evs := w.events(id)
	if head.Version != 1 || head.Session.ID != id || len(lines) != len(evs)+1 {
		t.Fatalf("bundle header %+v, %d lines for %d events", head, len(lines), len(evs))
	}
	file := filepath.Join(t.TempDir(), "s.kandev.jsonl")
	os.WriteFile(file, []byte(bundle), 0o600)

	// A new id: the same transcript, events of the new session, idle.
	r = w.mustRun("--json", "import", file)
	var imp struct {
		Session state.Session
		Import  struct {
			Events     int
			OriginalID string `json:"original_id"`
		}
	}
	decodeJSON(t, r.stdout, &imp)
	newID := imp.Session.ID
	if newID == id || imp.Import.Events != len(evs) || imp.Import.OriginalID != id || imp.Session.State != state.StateWaitingForInput || imp.Session.ResumeToken != "" {
		t.Fatalf("import: %s", r.stdout)
	}
	if a, b := w.mustRun("--json", "transcript", id).stdout, w.mustRun("--json", "transcript", newID).stdout; a != b {
		t.Fatalf("transcripts differ:\n%s\n%s", a, b)
	}
	got := w.events(newID)
	assertNoSeqGap(t, got)
	for i, e := range got {
		if e.SessionID != newID || e.Type != evs[i].Type || e.Content != evs[i].Content {
			t.Fatalf("imported event %d: %+v (was %+v)", i, e, evs[i])
		}
	}
	// The copy is its own conversation: a fresh agent session that is given the history.
	if out := w.mustRun("prompt", newID, "recall").stdout; !strings.Contains(out, "MANGO") {
		t.Fatalf("the imported session does not know its history: %s", out)
	}
	if n := len(w.events(id)); n != len(evs) {
		t.Fatalf("prompting the copy changed the original (%d events, was %d)", n, len(evs))
	}

	// --keep-id: refused where the id exists, kept in another home.
	if r := w.run("import", "--keep-id", file); r.code != 3 || !strings.Contains(r.stderr, id) {
		t.Fatalf("--keep-id onto an existing id: %s", r)
	}
	other := newWorld(t)
	other.mustRun("import", "--keep-id", file)
	if s := other.session(id); s.ResumeToken != head.Session.ResumeToken || s.State != state.StateWaitingForInput {
		t.Fatalf("--keep-id record: %+v", s)
	}
	if a, b := w.mustRun("--json", "transcript", id).stdout, other.mustRun("--json", "transcript", id).stdout; a != b {
		t.Fatal("the transcript moved with --keep-id differs")
	}
}

func TestImport_RefusesABrokenBundleAndWritesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("/say something")
	lines := strings.Split(strings.TrimSuffix(w.mustRun("export", id).stdout, "\n"), "\n")
	cases := map[string]struct {
		lines []string
		say   string
	}{
		"a gap":        {append(append([]string{}, lines[:3]...), lines[4:]...), "line 4: seq 4 where 3 was due"},
		"a bad line":   {append(append(append([]string{}, lines[:3]...), `{"seq":3,"type":`), lines[4:]...), "line 4: not a JSON event"},
		"no header":    {lines[1:], "line 1: not a kandev bundle header"},
		"a wrong kind": {append([]string{`{"kandev_bundle":7,"session":{}}`}, lines[1:]...), "bundle version 7"},
	}
	before := readListDir(t, filepath.Join(w.home, "sessions"))
	for name, tc := range cases {
		file := filepath.Join(t.TempDir(), "broken.jsonl")
		os.WriteFile(file, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600)
		r := w.run("import", file)
		if r.code != 1 || !strings.Contains(r.stderr, tc.say) || !strings.Contains(r.stderr, "nothing was imported") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%s: %s", name, r)
		}
	}
	if r := w.run("import", filepath.Join(t.TempDir(), "missing.jsonl")); r.code != 4 {
		t.Errorf("a missing bundle: %s", r)
	}
	if after := readListDir(t, filepath.Join(w.home, "sessions")); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused import wrote files: %v, was %v", after, before)
	}
}

func readListDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}
