//go:build unix

package e2e_test

// Bounded input, the rest of it: what a remote, an agent, a config or the
// home's own folders bring is checked before it is used.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// forgeRecord rewrites the record of session id on the rig's remote as
// whoever can push there might.
func forgeRecord(r *syncRig, id string, edit func(rec map[string]any)) {
	r.t.Helper()
	work := filepath.Join(r.t.TempDir(), "forge")
	r.gitOut(filepath.Dir(work), "init", "-q", work)
	r.gitOut(work, "fetch", "-q", r.bare, "refs/kandev/sessions/"+id+":refs/forge")
	r.gitOut(work, "checkout", "-q", "refs/forge")
	var rec map[string]any
	b, _ := os.ReadFile(filepath.Join(work, "record.json"))
	if err := json.Unmarshal(b, &rec); err != nil {
		r.t.Fatal(err)
	}
	edit(rec)
	b, _ = json.Marshal(rec)
	os.WriteFile(filepath.Join(work, "record.json"), b, 0o644)
	r.gitOut(work, "add", "-A")
	r.gitOut(work, "commit", "-q", "-m", "forged record")
	r.gitOut(work, "push", "-q", "-f", r.bare, "HEAD:refs/kandev/sessions/"+id)
}

// mcpFileNamed writes an --mcp file with one stdio server called name.
func mcpFileNamed(t *testing.T, name string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": "true"}}})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSetup_AnMCPServerNameThatIsNotANameIsRefused: an empty name, one of
// 1 MB, one with a control character or a path separator is refused in one
// short line (exit 2) from an --mcp file and from a config [mcp.NAME]
// table, and a pull of a record that holds one is refused whole (exit 1).
func TestSetup_AnMCPServerNameThatIsNotANameIsRefused(t *testing.T) {
	t.Parallel()
	bad := map[string]string{"empty": "", "1 MB": strings.Repeat("n", 1<<20-64), "control": "a\x1b[31mred", "separator": "../up"}
	for what, name := range bad {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.underCI() // nothing lingers: the start is refused before any owner
			_, res := w.start("--mcp", mcpFileNamed(t, name), "hello")
			if res.code != 2 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || len(res.stderr) > 400 || !strings.Contains(res.stderr, "MCP server name") {
				t.Fatalf("--mcp with server name %.40q: %.600s", name, res)
			}
		})
	}
	w := newWorld(t)
	w.underCI()
	w.config("[agents.demo]\nmcp = [\"a/b\"]\n[mcp.\"a/b\"]\ncommand = \"true\"\n")
	if _, res := w.start("--agent", "demo", "hello"); res.code != 2 || !strings.Contains(res.stderr, "path separator") {
		t.Fatalf("a config [mcp.\"a/b\"] table: %s", res)
	}

	r := newSyncRig(t, "path")
	id := r.a.mustStart("remember apple")
	r.a.mustRun("push", id)
	forgeRecord(r, id, func(rec map[string]any) {
		rec["mcp_config"] = []any{map[string]any{"name": strings.Repeat("n", 4096), "command": "true"}}
	})
	if res := r.b.run("pull", id); res.code != 1 || !strings.Contains(res.stderr, "MCP server name") || len(res.stderr) > 800 {
		t.Fatalf("a pulled record with a 4 KB server name: %.900s", res)
	}
	if _, err := os.Stat(filepath.Join(r.b.home, "sessions", id+".json")); err == nil {
		t.Fatal("the refused pull wrote the record")
	}
}

// TestDoctor_ChecksTheNotifyCommand: a [notify] command that does not exist
// is a FAIL line naming it, with the fix, and doctor exits 1.
func TestDoctor_ChecksTheNotifyCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hook := filepath.Join(t.TempDir(), "no-such-hook")
	w.config("[notify]\ncommand = [\"" + hook + "\"]\n")
	d := w.run("doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "FAIL  notify: [notify] command "+hook+" does not exist") || !strings.Contains(d.stdout, "fix: set [notify] command") {
		t.Fatalf("doctor with a [notify] command that does not exist: %s", d)
	}
	w.config("[notify]\ncommand = [\"sh\", \"-c\", \"cat\"]\n")
	if d := w.run("doctor"); !strings.Contains(d.stdout, "ok    notify: [notify] command sh -c cat") {
		t.Fatalf("doctor with a working [notify] command: %s", d)
	}
}

// TestHome_ASessionsOrSyncFolderThatIsALinkIsRefused: sessions/ or sync/
// under the home that is a symbolic link is refused in one line naming it,
// and nothing is written where it points.
func TestHome_ASessionsOrSyncFolderThatIsALinkIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.underCI() // the start is refused before any owner runs
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(w.home, "sessions")); err != nil {
		t.Fatal(err)
	}
	_, res := w.start("hello")
	if res.code != 1 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, filepath.Join(w.home, "sessions")) || !strings.Contains(res.stderr, "symbolic link") {
		t.Fatalf("start with sessions/ a link: %s", res)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("kandev wrote %d files where sessions/ points", len(entries))
	}

	r := newSyncRig(t, "path")
	id := r.a.mustStart("remember apple")
	r.a.mustRun("push", id)
	syncOut := t.TempDir()
	if err := os.Symlink(syncOut, filepath.Join(r.b.home, "sync")); err != nil {
		t.Fatal(err)
	}
	res = r.b.run("pull", id)
	if res.code != 1 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, filepath.Join(r.b.home, "sync")) || !strings.Contains(res.stderr, "symbolic link") {
		t.Fatalf("pull with sync/ a link: %s", res)
	}
	if entries, _ := os.ReadDir(syncOut); len(entries) != 0 {
		t.Fatalf("kandev wrote %d files where sync/ points", len(entries))
	}
}

// TestPull_AppendsAtMostMaxPullBytes: a remote log that adds 3 MB of valid,
// contiguous events (a few kilobytes once compressed) is refused by a pull
// bounded to 1 MiB: one line naming the bound, exit 1, nothing appended.
func TestPull_AppendsAtMostMaxPullBytes(t *testing.T) {
	t.Parallel()
	r := newSyncRig(t, "path")
	id := r.shared()
	r.b.config("[sync]\nmax_pull_bytes = 1048576\n")
	forgeRemote(r, id, func(last int64) string {
		var b strings.Builder
		for seq := last + 1; b.Len() < 3<<20; seq++ {
			fmt.Fprintf(&b, `{"seq":%d,"timestamp":"2026-12-01T10:00:00Z","type":"agent_message","session_id":"%s","role":"assistant","content":%q}`+"\n", seq, id, strings.Repeat("same words again ", 200))
		}
		return b.String()
	})
	before := homeFiles(t, r.b.home)
	res := r.b.run("pull", id)
	if res.code != 1 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, "max_pull_bytes = 1048576") || !strings.Contains(res.stderr, id) {
		t.Fatalf("a pull over [sync] max_pull_bytes: %s", res)
	}
	after := homeFiles(t, r.b.home)
	for p, was := range before {
		if after[p] != was {
			t.Errorf("the refused pull changed %s", p)
		}
	}
	r.b.config("")
	if res := r.b.run("pull", id); res.code != 0 {
		t.Fatalf("the same pull under the default bound: %s", res)
	}
}

// TestTrust_ShowsEveryValueAndAsksBeforeAnythingRuns: a pulled MCP server
// whose env holds BASH_ENV='$(id > FILE)' is shown with that value; without a
// terminal trust refuses unless --yes (exit 2, one line), --dry-run only
// shows, and on a terminal it asks: n keeps it waiting (exit 1), y trusts.
func TestTrust_ShowsEveryValueAndAsksBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	r := newSyncRig(t, "path")
	file := filepath.Join(t.TempDir(), "mcp.json")
	hook := `$(id > /tmp/kandev-trust-test-never)`
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"helper": map[string]any{"command": "sh", "args": []string{"-c", "true"}, "env": map[string]string{"BASH_ENV": hook, "T": "${SOME_TOKEN}"}},
		"web":    map[string]any{"type": "http", "url": "https://mcp.example.com/x", "headers": map[string]string{"X-Mode": "plain-value"}},
	}})
	os.WriteFile(file, b, 0o600)
	id := r.a.mustStart("--mcp", file, "remember apple")
	r.a.mustRun("push", id)
	r.b.mustRun("pull", id)
	pending := func() bool { return r.b.session(id).TrustPending }

	res := r.b.run("trust", id)
	if res.code != 2 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, "--yes") {
		t.Fatalf("trust without a terminal and without --yes: %s", res)
	}
	for _, want := range []string{"BASH_ENV='" + hook + "'", "T='${SOME_TOKEN}'", "https://mcp.example.com/x", "X-Mode: plain-value", "sh -c true"} {
		if !strings.Contains(res.stdout, want) {
			t.Fatalf("trust does not show %q:\n%s", want, res.stdout)
		}
	}
	if !pending() {
		t.Fatal("trust without --yes and without a terminal trusted the servers")
	}
	if dry := r.b.mustRun("trust", id, "--dry-run"); !strings.Contains(dry.stdout, "BASH_ENV='"+hook+"'") || !strings.Contains(dry.stdout, "nothing trusted") || !pending() {
		t.Fatalf("trust --dry-run: %s (pending %v)", dry, pending())
	}
	no := newTmux(t, r.b, kandevBin+" trust "+id)
	no.waitScreen("[y/N]")
	no.keys("n", "Enter")
	if scr := no.waitScreen("KANDEV-EXIT-"); !strings.Contains(scr, "KANDEV-EXIT-1") || !pending() {
		t.Fatalf("answering n on the terminal:\n%s", scr)
	}
	yes := newTmux(t, r.b, kandevBin+" trust "+id)
	yes.waitScreen("BASH_ENV=")
	yes.waitScreen("[y/N]")
	yes.keys("y", "Enter")
	if scr := yes.waitScreen("KANDEV-EXIT-"); !strings.Contains(scr, "KANDEV-EXIT-0") || pending() {
		t.Fatalf("answering y on the terminal:\n%s", scr)
	}
}

// TestPull_ACwdTheRemoteChoseOutsideTheCloneIsPaused: a pushed record with
// worktree null and a cwd the pusher chose (here a directory of B's) does
// not choose where B's agent writes: pull names it, prompt and resume
// refuse in one line (exit 5), status says paused, and nothing is written
// in that directory.
func TestPull_ACwdTheRemoteChoseOutsideTheCloneIsPaused(t *testing.T) {
	t.Parallel()
	r := newSyncRig(t, "path")
	id := r.a.mustStart("remember apple")
	r.a.mustRun("push", id)
	victim := t.TempDir()
	forgeRecord(r, id, func(rec map[string]any) {
		rec["worktree"] = nil
		rec["cwd"] = victim
	})
	pulled := r.b.mustRun("pull", id)
	if !strings.Contains(pulled.stdout, id+" is paused") || !strings.Contains(pulled.stdout, victim) {
		t.Fatalf("pull does not name the paused session and its directory: %s", pulled)
	}
	for _, args := range [][]string{{"prompt", id, "/write planted.txt from the remote"}, {"resume", id}} {
		res := r.b.run(args...)
		if res.code != 5 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, victim) {
			t.Fatalf("kandev %s on a session whose cwd the remote chose: %s", args[0], res)
		}
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Fatalf("the agent wrote %d files in the directory the remote chose", len(entries))
	}
	var st struct {
		Status struct{ Badge, Paused string } `json:"status"`
	}
	decodeJSON(t, r.b.mustRun("--json", "status", id).stdout, &st)
	if st.Status.Badge != "paused" || !strings.Contains(st.Status.Paused, victim) {
		t.Fatalf("status of the paused session: %+v", st.Status)
	}
}

// TestAgent_ALineOverTheBoundIsRefusedInOneMarkerAndTheTurnGoesOn: an agent
// that writes one session/update line just over 10 MiB (the bound every
// reader of the stream has) costs the owner no more than the bound: the line
// is read through and dropped, the log says so in one message_refused
// marker, and the turn ends as usual.
func TestAgent_ALineOverTheBoundIsRefusedInOneMarkerAndTheTurnGoesOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	huge := buildTestdata(t, "hugeline")
	w.config(fmt.Sprintf("[agents.huge]\ncommand = [%q, %q]\n", huge, kandevBin))
	w.env = append(w.env, fmt.Sprintf("HUGE_LINE_BYTES=%d", 11<<20))
	id, res := w.start("--agent", "huge", "remember apple")
	if res.code != 0 {
		t.Fatal(res)
	}
	if res := w.run("prompt", id, "/say HUGE-LINE-PLEASE and after it"); res.code != 0 || !strings.Contains(res.stdout, "and after it") {
		t.Fatalf("the turn with a line over the bound: %.800s", res)
	}
	refused := markersOf(w.events(id), "message_refused")
	if len(refused) != 1 || !strings.Contains(refused[0].Summary, "bytes was refused") {
		t.Fatalf("%d message_refused markers, want 1: %+v", len(refused), refused)
	}
	if fi, err := os.Stat(filepath.Join(w.home, "sessions", id+".jsonl")); err != nil || fi.Size() > 1<<20 {
		t.Fatalf("the log holds the refused line (%v, %v)", fi.Size(), err)
	}
}
