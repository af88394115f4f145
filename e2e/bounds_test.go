package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// What a hook, a file or a prompt brings is bounded: a note of any size
// reaches the hook without blocking the owner, a failing hook is said once,
// an --mcp file or a prompt over its limit is refused naming the limit.

// runWithin runs kandev and fails the test when it has not exited after d
// (a hang, not a slow run).
func (w *world) runWithin(d time.Duration, stdin string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("kandev %.80q did not exit within %s\n%s", strings.Join(args, " "), d, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func markersOf(evs []eventlog.Event, kind string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range ofType(evs, eventlog.EventMarker) {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestNotify_AParkedPermissionWithAHugeTitleReachesTheHookCutAndNeverWedgesTheOwner(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "")
	id := w.startWarm("60s", "--permissions", "defer")
	title := strings.Repeat("t", 100<<10)
	if r := w.runWithin(30*time.Second, "/write "+title+" X", "--permissions", "defer", "prompt", id, "-"); r.code != 7 {
		t.Fatalf("want exit 7 (parked): %s", r)
	}
	n := waitNote(t, notes, id, "permission")
	if len(n.Summary) > 8<<10 || !strings.Contains(n.Summary, "cut") || !strings.Contains(n.Summary, "kandev approve "+id) {
		t.Fatalf("the note's summary (%d bytes) is not cut with a marker that keeps the advice: %.300q", len(n.Summary), n.Summary)
	}
	if r := w.runWithin(20*time.Second, "", "deny", id); r.code != 0 {
		t.Fatalf("deny: %s", r)
	}
	if r := w.runWithin(20*time.Second, "", "close", id, "--now"); r.code != 0 {
		t.Fatalf("close --now: %s", r)
	}
}

func TestNotify_AFailingHookIsOneWarningMarkerPerKindAndOwner(t *testing.T) {
	t.Parallel()
	notExecutable := filepath.Join(t.TempDir(), "hook.sh")
	os.WriteFile(notExecutable, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o644)
	cases := []struct {
		name, command, says string
	}{
		{"a non-zero exit", `["sh", "-c", "cat >/dev/null; exit 3"]`, "exited with status 3"},
		{"a timeout", `["sleep", "97.25"]`, "timed out after 1s"},
		{"a command that is not executable", `["` + notExecutable + `"]`, "could not start"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.config("[notify]\ncommand = " + c.command + "\ntimeout_seconds = 1\n")
			id := w.startWarm("60s")
			for _, word := range []string{"ONE", "TWO", "THREE"} {
				w.mustRun("prompt", id, "/say "+word)
			}
			var marks []eventlog.Event
			waitFor(t, 20*time.Second, "a notify_failed marker", func() bool {
				marks = markersOf(w.eventsSoFar(id), "notify_failed")
				return len(marks) > 0
			})
			time.Sleep(2500 * time.Millisecond) // the later hooks' ends, which must not be logged again
			marks = markersOf(w.events(id), "notify_failed")
			if len(marks) != 1 || marks[0].Severity != "warning" || !strings.Contains(marks[0].Summary, c.says) {
				t.Fatalf("want one warning marker saying %q, got %s", c.says, mustJSON(marks))
			}
		})
	}
}

func TestInputs_AnMCPFileOverItsLimitIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	file := filepath.Join(t.TempDir(), "big.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": "notes-mcp", "args": []string{strings.Repeat("a", 2<<20)}}}})
	os.WriteFile(file, b, 0o600)
	_, r := w.start("--mcp", file, "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "1 MiB") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("want one line naming the 1 MiB limit, exit 2: %.500s", r)
	}
	if got := w.sessions(); len(got) != 0 {
		t.Fatalf("a refused start left sessions %v", got)
	}
}

func TestInputs_APromptOverItsLimitIsRefusedBeforeTheAgentSeesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	huge := strings.Repeat("word ", 12<<20/5)
	id, r := w.start("--linger", "0", "hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	refused := func(r result, what string) {
		t.Helper()
		if r.code != 2 || !strings.Contains(r.stderr, "1 MiB") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("%s: want one line naming the 1 MiB limit, exit 2: %.500s", what, r)
		}
	}
	before := len(w.events(id))
	refused(w.runInput(huge, "prompt", id, "--linger", "0", "-"), "prompt")
	refused(w.runInput(huge, "start", "--linger", "0", "-"), "start")
	// Queued for a live owner: refused here, never put in its inbox.
	warm := w.startWarm("60s")
	warmBefore := len(w.events(warm))
	refused(w.runInput(huge, "prompt", warm, "-"), "a prompt for a live owner")
	if got := w.sessions(); len(got) != 2 {
		t.Fatalf("a refused start made a session: %v", got)
	}
	if n := len(w.events(id)); n != before {
		t.Fatalf("a refused prompt wrote %d events", n-before)
	}
	for _, e := range w.events(warm)[warmBefore:] {
		if e.Type == eventlog.EventTurnStarted || len(e.Content) > 1<<20 {
			t.Fatalf("a refused queued prompt reached the log: %s %s", e.Type, e.TurnID)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.home, "sessions", warm+".inbox.jsonl")); len(b) > 1<<20 {
		t.Fatalf("the refused prompt reached the inbox (%d bytes)", len(b))
	}
	w.mustRun("prompt", warm, "/say STILL-FINE")
}

func TestEditor_APromptOverItsLimitIsAnErrorAndTheNextOneRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.rawACP()
	a.stdin.Write(append(request(1, "initialize", initParams), request(2, "session/new", sdk.NewSessionRequest{Cwd: w.cwd, McpServers: []sdk.McpServer{}})...))
	var created struct{ SessionID string }
	json.Unmarshal(a.next(t, "2").Result, &created)
	id := sdk.SessionId(created.SessionID)
	go func() {
		a.stdin.Write(request(3, "session/prompt", sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(strings.Repeat("big ", 2<<20/4))}}))
		a.stdin.Write(request(4, "session/prompt", sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("remember AFTER")}}))
		a.stdin.Close()
	}()
	got := a.answers(t)
	a.exit(t)
	if e := got["3"].Error; e == nil || !strings.Contains(e.Message, "1 MiB") {
		t.Fatalf("the 2 MiB prompt was answered %s, want an error naming the limit", mustJSON(got["3"]))
	}
	evs := w.events(created.SessionID)
	if n := len(ofType(evs, eventlog.EventTurnStarted)); n != 1 || !strings.Contains(agentText(evs, ""), "AFTER") {
		t.Fatalf("%d turns in the log, want only the prompt after the refused one", n)
	}
}

func TestSetup_TheSecretCheckKnowsTheUsualNames(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	dir := t.TempDir()
	cases := map[string]map[string]any{
		"mysql":  {"command": "db-mcp", "env": map[string]string{"MYSQL_PWD": "hunter2"}},
		"pass":   {"command": "db-mcp", "env": map[string]string{"DB_PASSWORD": "hunter2"}},
		"cookie": {"type": "http", "url": "https://mcp.example.com", "headers": map[string]string{"Cookie": "session=abc123"}},
		"proxy":  {"type": "http", "url": "https://mcp.example.com", "headers": map[string]string{"Proxy-Authorization": "Basic dXNlcjpwYXNz"}},
		"apikey": {"type": "sse", "url": "https://mcp.example.com", "headers": map[string]string{"X-Api-Key": "k-42"}},
	}
	for name, srv := range cases {
		file := filepath.Join(dir, name+".json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": srv}})
		os.WriteFile(file, b, 0o600)
		if _, r := w.start("--mcp", file, "hello"); r.code != 2 || !strings.Contains(r.stderr, "looks like a secret") {
			t.Errorf("%s: a literal secret was not refused: %s", name, r)
		}
	}
	// References pass.
	file := filepath.Join(dir, "ok.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"type": "http", "url": "https://mcp.example.com",
		"headers": map[string]string{"Cookie": "session=${SESSION_COOKIE}", "Authorization": "Bearer ${TOKEN}"}}}})
	os.WriteFile(file, b, 0o600)
	if _, r := w.start("--linger", "0", "--mcp", file, "hello"); r.code != 0 {
		t.Fatalf("references were refused: %s", r)
	}
	for _, secret := range []string{"hunter2", "abc123", "dXNlcjpwYXNz", "k-42"} {
		assertNoSecretUnder(t, w.home, secret)
	}
}

func TestSetup_TheMarkerAboutUnsetVariablesIsWhole(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	env := map[string]string{}
	for i := range 80 {
		name := fmt.Sprintf("KANDEV_TEST_UNSET_VARIABLE_WITH_A_LONG_NAME_%02d", i)
		env[name] = "${" + name + "}"
	}
	file := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": "notes-mcp", "env": env}}})
	os.WriteFile(file, b, 0o600)
	id, r := w.start("--linger", "0", "--mcp", file, "hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	var unset []eventlog.Event
	for _, m := range markersOf(w.events(id), "setup_not_offered") {
		if strings.Contains(m.Summary, "not set") {
			unset = append(unset, m)
		}
	}
	if len(unset) != 1 {
		t.Fatalf("want one marker about unset variables: %s", mustJSON(unset))
	}
	s := unset[0].Summary
	if strings.Contains(s, "[truncated]") || !strings.HasSuffix(s, ".") || !strings.Contains(s, "80 variables") || !strings.Contains(s, "KANDEV_TEST_UNSET_VARIABLE_WITH_A_LONG_NAME_00") {
		t.Fatalf("the marker is cut or does not say how many: %q", s)
	}
}

func TestPrune_RemovesTheLogAKilledForkLeftAndDoctorSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--linger", "0", "remember FIG")
	if r.code != 0 {
		t.Fatal(r)
	}
	child := strings.TrimSpace(strings.SplitN(w.mustRun("fork", id).stdout, "\n", 2)[0])
	// What a fork killed between its log and its record leaves: the log alone.
	for _, p := range []string{child + ".json", child + ".owner.lock", child + ".record.lock"} {
		os.Remove(filepath.Join(w.home, "sessions", p))
	}
	log := filepath.Join(w.home, "sessions", child+".jsonl")
	if d := w.run("doctor"); !strings.Contains(d.stdout+d.stderr, "kandev prune removes it") || !strings.Contains(d.stdout+d.stderr, "fork") {
		t.Fatalf("doctor does not say prune removes the fork's log: %s", d)
	}
	w.mustRun("prune")
	if _, err := os.Stat(log); err == nil {
		t.Fatalf("prune left %s", log)
	}
	if d := w.run("doctor"); strings.Contains(d.stdout, child) {
		t.Fatalf("doctor still names the fork: %s", d)
	}
}

func TestLease_BeyondTheMaximumIsNeverHonoured(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--linger", "0", "hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	lease, _ := json.Marshal(state.Lease{SessionID: id, AttachedTo: "ci:forged", AttachedAt: time.Now().UTC(), AttachExpiresAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)})
	os.WriteFile(filepath.Join(w.home, "sessions", id+".lease.json"), lease, 0o600)
	var st struct {
		Status struct {
			AttachedTo string `json:"attached_to"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Status.AttachedTo != "" {
		t.Fatalf("status shows the 9999 lease as held: %+v", st.Status)
	}
	if d := w.run("doctor"); !strings.Contains(d.stdout, "beyond the 24-hour maximum") {
		t.Fatalf("doctor does not say why the lease is ignored: %s", d)
	}
	if r := w.run("prompt", id, "--linger", "0", "/say FREE"); r.code != 0 {
		t.Fatalf("a lease ending in 9999 still binds: %s", r)
	}
	if r := w.run("resume", id, "--linger", "0"); r.code != 0 {
		t.Fatalf("resume: %s", r)
	}
}

func TestNotify_TheMacOSExampleInTheDocsPassesATitleWithQuotesAsData(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("SKIP: jq is not installed")
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.Contains(line, "osascript") && strings.HasPrefix(line, "# command = ") {
			example = strings.TrimPrefix(line, "# ")
		}
	}
	if example == "" {
		t.Fatal("no macOS example in docs/configuration.md")
	}
	// osascript as a recorder of its arguments, one per line.
	bin, args := t.TempDir(), filepath.Join(t.TempDir(), "args")
	os.WriteFile(filepath.Join(bin, "osascript"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+args+"\n"), 0o755)
	w := newWorld(t)
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "PATH=") {
			w.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	w.config("[notify]\n" + example + "\n")
	id := w.startWarm("60s", "--permissions", "defer")
	name := `say-"hi"-$(id)-'x'.txt` // no space: the demo agent's /write takes PATH TEXT
	if r := w.run("--permissions", "defer", "prompt", id, "/write "+name+" X"); r.code != 7 {
		t.Fatalf("want exit 7: %s", r)
	}
	var got []string
	waitFor(t, 20*time.Second, "osascript to run", func() bool {
		b, _ := os.ReadFile(args)
		got = strings.Split(strings.TrimSpace(string(b)), "\n")
		return len(got) > 1
	})
	w.mustRun("deny", id)
	last := got[len(got)-1]
	if !strings.HasPrefix(last, "waiting for permission: ") || !strings.Contains(last, name) {
		t.Fatalf("the summary is not osascript's own argument, whole: %q", got)
	}
	for _, a := range got[:len(got)-1] {
		if strings.Contains(a, "waiting for permission") {
			t.Fatalf("the summary is pasted into the script: %q", a)
		}
	}
	if strings.Contains(strings.Join(got, "\n"), "uid=") {
		t.Fatalf("the title ran as a command: %q", got)
	}
}
