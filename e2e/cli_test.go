package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// colourEnv is the world's environment without NO_COLOR.
func (w *world) colourEnv() []string {
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return env
}

// runStdio runs kandev with the given files as its stdio (nil: /dev/null)
// and the given environment, and returns its exit code.
func (w *world) runStdio(env []string, stdin, stdout, stderr *os.File, args ...string) int {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("kandev %v did not finish in time (waiting on a terminal that is not there?)", args)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return 0
}

func openDevNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func createFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fileText(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTerminal_StdoutOnDevNullPutsNoColourInTheStderrLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	log := createFile(t, "kandev.log")
	if code := w.runStdio(w.colourEnv(), openDevNull(t), openDevNull(t), log, "start", "/think pondering"); code != 0 {
		t.Fatalf("exit %d\n%s", code, fileText(t, log))
	}
	got := fileText(t, log)
	if !strings.Contains(got, "agent started") || strings.Contains(got, "\x1b") {
		t.Fatalf("the log has colour codes (or lacks the agent line):\n%q", got)
	}
}

func TestTerminal_ResumeInteractiveWithStdinFromDevNullShowsNoPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	errLog := createFile(t, "err.log")
	code := w.runStdio(w.env, openDevNull(t), openDevNull(t), errLog, "resume", "-i", id)
	got := fileText(t, errLog)
	if code != 2 || strings.Contains(got, "kandev>") || !strings.Contains(got, "-i needs a terminal on stdin") {
		t.Fatalf("resume -i </dev/null: exit %d, stderr %q", code, got)
	}
}

func TestTerminal_AskModeWithStdinFromDevNullDeniesAndSaysHowToApprove(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	errLog := createFile(t, "err.log")
	code := w.runStdio(w.env, openDevNull(t), openDevNull(t), errLog, "--permissions", "ask", "prompt", id, "/write out.txt from a script")
	got := fileText(t, errLog)
	if code != 0 || strings.Count(got, "--permissions approve-all") != 1 || !strings.Contains(got, "Write out.txt") {
		t.Fatalf("exit %d, stderr:\n%s", code, got)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("ask mode without a terminal allowed the write")
	}
	if res := ofType(w.events(id), "permission_resolved"); len(res) != 1 || strings.HasPrefix(res[0].Content, "selected allow") {
		t.Fatalf("permission answers: %+v", res)
	}
}

func TestTTY_AskModeWithStdinFromDevNullDoesNotAskOnTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	tm := newTmux(t, w, kandevBin+" --permissions ask prompt "+id+" '/write out.txt from a script' </dev/null")
	scr := tm.waitScreen("KANDEV-EXIT-")
	if !strings.Contains(scr, "KANDEV-EXIT-0") || strings.Contains(scr, "[y/N]") || !strings.Contains(scr, "approve-all") {
		t.Fatalf("ask with stdin from /dev/null in a terminal:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "out.txt")); err == nil {
		t.Fatal("the write was allowed")
	}
}

func TestTTY_ColourOnlyOnTheStreamThatIsATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	errLog := filepath.Join(t.TempDir(), "err.log")
	tm := newTmux(t, w, "unset NO_COLOR; "+kandevBin+" start '/think deep thought' 2>"+errLog)
	tm.waitScreen("KANDEV-EXIT-")
	scr := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name, "-S", "-200")
	if !strings.Contains(scr, "\x1b[") || !strings.Contains(scr, "deep thought") {
		t.Fatalf("no colour on the terminal's stdout:\n%q", scr)
	}
	b, _ := os.ReadFile(errLog)
	if !strings.Contains(string(b), "agent started") || bytes.Contains(b, []byte("\x1b")) {
		t.Fatalf("stderr to a file has colour codes (or lacks the agent line): %q", b)
	}
}

func TestCLI_UsageErrorsWithJSONPrintAnErrorObjectOnStdout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, args := range [][]string{{"--json", "list", "--bogus"}, {"--json", "events"}, {"status", "--json", "a", "b"}} {
		r := w.run(args...)
		var e struct {
			Error struct{ Code, Message string }
		}
		decodeJSON(t, r.stdout, &e)
		if r.code != 2 || e.Error.Code != "usage" || e.Error.Message == "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("kandev %v: %s", args, r)
		}
	}
}

func TestCLI_PromptWithTextWhereTheIDGoesSuggestsLatest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.run("prompt", "some text")
	if r.code != 2 || !strings.Contains(r.stderr, `no session "some text"; to send it to the most recent session: kandev prompt --latest 'some text'`) {
		t.Fatalf("prompt \"some text\": %s", r)
	}
	r = w.run("prompt", "hello", "there")
	if r.code != 4 || !strings.Contains(r.stderr, `kandev prompt --latest 'hello there'`) {
		t.Fatalf("prompt hello there: %s", r)
	}
	// The suggested command does what it says.
	r = w.run("prompt", "--latest", "some text")
	if r.code != 0 || !strings.Contains(agentText(w.events(id), ""), "some text") {
		t.Fatalf("prompt --latest: %s", r)
	}
}

func TestCLI_ConfigWithUnknownKeysOrValuesOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfgPath := filepath.Join(w.home, "config.toml")
	cases := []struct{ toml, want string }{
		{"default_agnet = \"demo\"\n", "unknown key default_agnet"},
		{"[session.atach]\ndefault_ttl_seconds = 60\n", "unknown key session.atach "},
		{"[session.attach]\ndefault_ttl_seconds = 86401\n", "default_ttl_seconds = 86401 is over the limit of 86400"},
	}
	for _, tc := range cases {
		w.config(tc.toml)
		r := w.run("start", "hi")
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, cfgPath) {
			t.Errorf("config %q: %s", tc.toml, r)
		}
	}
	r := w.run("--config", filepath.Join(w.home, "no-such.toml"), "start", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "no-such.toml: no such file") {
		t.Fatalf("missing --config file: %s", r)
	}
	os.Remove(cfgPath)
	if r := w.run("start", "hi"); r.code != 0 {
		t.Fatalf("no config file at the default path: %s", r)
	}
}

func TestResume_NegativeTTLMeansTheDefault(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	for _, args := range [][]string{{"--ttl", "-1"}, {"--ttl=-30"}} {
		var out struct {
			Attach struct {
				AttachedAt      time.Time `json:"attached_at"`
				AttachExpiresAt time.Time `json:"attach_expires_at"`
			}
		}
		r := w.mustRun(append([]string{"--json", "resume", id}, args...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		decodeJSON(t, lines[len(lines)-1], &out)
		if d := out.Attach.AttachExpiresAt.Sub(out.Attach.AttachedAt); d != 900*time.Second {
			t.Fatalf("%v gave a lease of %v, want 900s", args, d)
		}
		w.mustRun("detach", id)
	}
	if r := w.run("resume", id, "--ttl", "99999999999999999999999"); r.code != 2 || !strings.Contains(r.stderr, "over the limit of 86400 seconds") {
		t.Fatalf("huge ttl: %s", r)
	}
}

func TestList_ShowsRecordsThatDoNotLoadAndWarns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	good, _ := w.start("--title", "good one")
	bad := "20260101-000000-0badc0de"
	if err := os.WriteFile(filepath.Join(w.home, "sessions", bad+".json"), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.mustRun("list")
	if !strings.Contains(r.stdout, good) || !strings.Contains(r.stdout, bad) || !strings.Contains(r.stdout, "unreadable record") ||
		strings.Count(r.stderr, "could not be read") != 1 {
		t.Fatalf("list with a corrupt record: %s", r)
	}
	var out struct {
		Sessions []struct{ ID, Badge, Problem string }
	}
	r = w.mustRun("--json", "list")
	decodeJSON(t, r.stdout, &out)
	if len(out.Sessions) != 2 || out.Sessions[1].ID != bad || out.Sessions[1].Badge != "unknown" || !strings.Contains(out.Sessions[1].Problem, "corrupt") {
		t.Fatalf("list --json with a corrupt record: %+v", out.Sessions)
	}
	if r := w.mustRun("list", "--resumable"); strings.Contains(r.stdout, bad) || !strings.Contains(r.stderr, "could not be read") {
		t.Fatalf("list --resumable offers a record it cannot read: %s", r)
	}
}

func TestText_ControlCharactersInTitlesAreEscapedAndJSONKeepsThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	title := "evil \x1b[2J\x1b]0;pwned\a\rover"
	id, r := w.start("--title", title, "/say hi")
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, cmd := range [][]string{{"list"}, {"status", id}, {"recap", id}} {
		r := w.mustRun(cmd...)
		if strings.ContainsAny(r.stdout, "\x1b\a\r") || !strings.Contains(r.stdout, `evil \x1b[2J\x1b]0;pwned\a\rover`) {
			t.Errorf("kandev %v prints the title raw:\n%q", cmd, r.stdout)
		}
	}
	var st struct{ Session struct{ Title string } }
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if st.Session.Title != title {
		t.Fatalf("JSON title %q, want %q", st.Session.Title, title)
	}
}

func TestText_ControlCharactersInTheAgentsStreamedTextAreEscaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	r := w.mustRun("prompt", id, "\x1b[2Jcleared\rline")
	if strings.ContainsAny(r.stdout, "\x1b\r") || !strings.Contains(r.stdout, `\x1b[2Jcleared\rline`) {
		t.Fatalf("streamed text printed raw:\n%q", r.stdout)
	}
	if got := agentText(w.events(id), ""); !strings.Contains(got, "\x1b[2Jcleared\rline") {
		t.Fatalf("the log does not keep the text as sent: %q", got)
	}
}
