package e2e_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// Golden homes are homes written by a release of kandev, one per format,
// under testdata/homes/<format>/. Every later kandev must still read and
// resume them. Paths in their files are placeholders: {{HOME}}, {{CWD}} and
// {{KANDEV}} (the binary), filled in when a test copies a home.
var (
	updateGoldenHome = flag.Bool("update-golden-home", false,
		"rewrite testdata/homes/<format>/ with a home made by this kandev")
	goldenHomeKandev = flag.String("golden-home-kandev", "",
		"with -update-golden-home: the kandev binary that makes the home (default: this one)")
	goldenHomeFormat = flag.Int("golden-home-format", state.Format,
		"with -update-golden-home: the format that binary writes (the directory's name)")
)

const goldenHomes = "../testdata/homes"

// goldenConfig is the config of a golden home: a slow demo agent (so an owner
// can be killed with a tool call open) and a demo agent whose command changed
// since its session's turn was interrupted (so that session is paused).
const goldenConfig = `[agents.slow]
command = ["{kandev}", "demo-agent", "--delay", "300"]

[agents.mine]
command = ["{kandev}", "demo-agent", "--no-load"]
`

// goldenLeaseHolder holds the lease of the "leased" session until goldenLeaseExpiry.
const goldenLeaseHolder = "ci:golden"

var goldenLeaseExpiry = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)

// TestGoldenHome_Generate writes the golden home of the current format:
//
//	go test ./e2e/ -run TestGoldenHome_Generate -update-golden-home
//
// or, with -golden-home-kandev and -golden-home-format, that of an older
// release built from its commit.
//
// Its sessions are named by title: idle (with a mode and an option set, from
// format 4), interrupted (owner killed with a
// read tool call open), paused (interrupted, then its agent command changed),
// done, leased (a live lease and a queued input; its owner was killed too).
func TestGoldenHome_Generate(t *testing.T) {
	t.Parallel()
	if !*updateGoldenHome {
		t.Skip("run with -update-golden-home to rewrite " + goldenHomes + "/" + strconv.Itoa(state.Format))
	}
	if *goldenHomeKandev != "" {
		ours := kandevBin
		kandevBin = *goldenHomeKandev
		t.Cleanup(func() { kandevBin = ours })
	}
	w := newWorld(t)
	w.env = append(w.env, "KANDEV_HOLDER=cli:golden") // no user or host name of this machine in the home
	w.config(strings.Replace(goldenConfig, `, "--no-load"]`, `]`, 1))
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("golden notes\n"), 0o644)

	_, r := w.start("--title", "idle", "--permissions", "approve-all", "--mode", "code", "--set", "effort=high",
		"remember PINEAPPLE\n/say hello golden home\n/think about formats\n/read notes.txt\n/write out.txt written by the agent\nplain words")
	mustOK(t, r)

	id, r := w.start("--title", "interrupted", "--agent", "slow")
	mustOK(t, r)
	// Under the default permission mode, the one the checks run under: a turn
	// killed under another mode would pause for the change.
	w.killAt(isType(eventlog.EventToolCall), 20*time.Second, "prompt", id, "remember MANGO\n/read notes.txt\n/say after the read")
	if evs := w.events(id); len(ofType(evs, eventlog.EventToolCall)) == 0 || len(ofType(evs, eventlog.EventToolResult)) != 0 {
		t.Fatalf("interrupted: want an open tool call, got %d calls %d results", len(ofType(evs, eventlog.EventToolCall)), len(ofType(evs, eventlog.EventToolResult)))
	}

	id, r = w.start("--title", "paused", "--agent", "mine")
	mustOK(t, r)
	w.killAt(isType(eventlog.EventAgentMessage), 20*time.Second, "prompt", id, "/say working\n/sleep 60000")
	w.config(goldenConfig)
	if r := w.run("resume", id); r.code != 5 {
		t.Fatalf("paused: resume after the command changed: %s", r)
	}
	w.mustRun("detach", id) // the lease that resume took binds nobody in the golden home

	id, r = w.start("--title", "done", "/say finished")
	mustOK(t, r)
	w.mustRun("done", id)

	id, r = w.start("--title", "leased")
	mustOK(t, r)
	w.mustRun("resume", id, "--holder", goldenLeaseHolder, "--ttl", "86400")
	owner, _ := w.background("prompt", id, "--holder", goldenLeaseHolder, "/say working\n/sleep 60000")
	waitFor(t, 20*time.Second, "the leased session's turn", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	w.mustRun("prompt", id, "--holder", goldenLeaseHolder, "--no-follow", "/say queued while leased")
	owner.Process.Kill()
	owner.Wait()

	dst := filepath.Join(goldenHomes, strconv.Itoa(*goldenHomeFormat))
	os.RemoveAll(dst)
	saveGoldenHome(t, w, dst)
}

func mustOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatal(r)
	}
}

// saveGoldenHome copies the world's home to dst without locks and caches,
// with paths replaced by placeholders and the lease made to last.
func saveGoldenHome(t *testing.T, w *world, dst string) {
	err := filepath.WalkDir(w.home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if path == filepath.Join(w.home, "format") && *goldenHomeFormat == 0 {
			return nil // written by this test's own reads; homes of format 0 had none
		}
		if strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".digest") || strings.HasPrefix(name, ".") {
			return nil // runtime locks, caches and temp files are no part of a home's format
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(name, ".lease.json") {
			var l state.Lease
			if err := json.Unmarshal(b, &l); err != nil {
				return err
			}
			l.AttachExpiresAt = goldenLeaseExpiry
			b, _ = json.MarshalIndent(l, "", "  ")
			b = append(b, '\n')
		}
		for _, p := range [][2]string{{kandevBin, "{{KANDEV}}"}, {w.home, "{{HOME}}"}, {w.cwd, "{{CWD}}"}} {
			b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
		}
		rel, _ := filepath.Rel(w.home, path)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// loadGoldenHome copies the golden home at src into a new world, filling in
// the placeholders, with the home's own permissions (0700 dirs, 0600 files).
func loadGoldenHome(t *testing.T, src string) *world {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("golden notes\n"), 0o644)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(w.home, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, p := range [][2]string{{"{{KANDEV}}", kandevBin}, {"{{HOME}}", w.home}, {"{{CWD}}", w.cwd}} {
			b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
		}
		if strings.HasSuffix(d.Name(), ".lease.json") {
			// The generator made its lease last; a lease beyond the 24-hour
			// maximum binds nobody, so the loaded home holds it for an hour.
			b = bytes.ReplaceAll(b, []byte(goldenLeaseExpiry.Format(time.RFC3339)), []byte(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
		}
		return os.WriteFile(out, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// goldenSession is what a golden home's session must look like to this kandev.
type goldenSession struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Badge  string `json:"badge"`
	Format int    `json:"format"`
}

func TestGoldenHomes_EveryFormatStillListsShowsExportsAndResumes(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(goldenHomes)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		found = found || d.Name() == strconv.Itoa(state.Format)
		t.Run("format "+d.Name(), func(t *testing.T) {
			t.Parallel()
			format, _ := strconv.Atoi(d.Name())
			checkGoldenHome(t, loadGoldenHome(t, filepath.Join(goldenHomes, d.Name())), format)
		})
	}
	if !found {
		t.Fatalf("no golden home of the current format %d in %s: generate it with -update-golden-home", state.Format, goldenHomes)
	}
}

func checkGoldenHome(t *testing.T, w *world, format int) {
	var list struct{ Sessions []goldenSession }
	decodeJSON(t, w.mustRun("--json", "list").stdout, &list)
	byTitle := map[string]goldenSession{}
	for _, s := range list.Sessions {
		byTitle[s.Title] = s
	}
	want := map[string]string{"idle": "idle", "interrupted": "needs-resume", "paused": "paused", "done": "done", "leased": "needs-resume"}
	for title, badge := range want {
		if byTitle[title].Badge != badge {
			t.Fatalf("list: session %q has badge %q, want %q (listed: %+v)", title, byTitle[title].Badge, badge, list.Sessions)
		}
	}
	titles := make([]string, 0, len(byTitle))
	for title, s := range byTitle {
		titles = append(titles, title)
		checkGoldenReads(t, w, s)
	}
	sort.Strings(titles)
	if len(titles) != len(want) {
		t.Fatalf("list shows %v, want exactly %d sessions", titles, len(want))
	}
	checkGoldenDoctor(t, w, format, len(want))
	checkGoldenResumes(t, w, byTitle)
	if format >= 4 { // the agent's setup is recorded since format 4
		if r := w.mustRun("prompt", byTitle["idle"].ID, "/setup"); !strings.Contains(r.stdout, "mode: code, model: demo-small, options: effort=high") {
			t.Fatalf("idle: the restored agent lost its setup: %s", r)
		}
	}
}

// checkGoldenReads runs every read-only command on one session.
func checkGoldenReads(t *testing.T, w *world, s goldenSession) {
	var st struct {
		Session goldenSession
		Status  struct {
			Badge           string
			AttachedTo      string `json:"attached_to"`
			PendingInputs   int    `json:"pending_inputs"`
			AttachExpiresAt string `json:"attach_expires_at"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "status", s.ID).stdout, &st)
	if st.Status.Badge != s.Badge || st.Session.Title != s.Title {
		t.Fatalf("status of %s: %+v, list said %+v", s.Title, st, s)
	}
	if s.Title == "leased" && (st.Status.AttachedTo != goldenLeaseHolder || st.Status.PendingInputs != 1) {
		t.Fatalf("status of leased: %+v", st.Status)
	}
	var page struct {
		Entries []struct {
			Message struct {
				Role  string
				Parts []struct{ Type, State, ToolName string }
			}
		}
	}
	decodeJSON(t, w.mustRun("--json", "transcript", s.ID).stdout, &page)
	if len(page.Entries) == 0 {
		t.Fatalf("transcript of %s is empty", s.Title)
	}
	if s.Title == "interrupted" && !strings.Contains(w.mustRun("transcript", s.ID).stdout, "[tool]") {
		t.Fatalf("transcript of interrupted shows no tool call")
	}
	var recap struct {
		Recap struct {
			RecentMessages []json.RawMessage `json:"recent_messages"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "recap", s.ID).stdout, &recap)
	if len(recap.Recap.RecentMessages) == 0 {
		t.Fatalf("recap of %s has no messages", s.Title)
	}
	export := strings.Split(strings.TrimSpace(w.mustRun("export", s.ID).stdout), "\n")
	if got, want := len(export)-1, len(w.events(s.ID)); got != want || !strings.Contains(export[0], `"kandev_bundle"`) {
		t.Fatalf("export of %s: %d events, the log has %d", s.Title, got, want)
	}
}

// checkGoldenResumes resumes what can be resumed: the interrupted session is
// continued exactly once, the leased one only by its holder, and neither log
// loses a byte it had.
func checkGoldenResumes(t *testing.T, w *world, byTitle map[string]goldenSession) {
	logOf := func(title string) []byte {
		b, _ := os.ReadFile(filepath.Join(w.home, "sessions", byTitle[title].ID+".jsonl"))
		return b
	}
	id := byTitle["interrupted"].ID
	before := logOf("interrupted")
	w.mustRun("resume", id)
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	if n := continuations(evs); n != 1 {
		t.Fatalf("interrupted: %d continuations after resume, want 1", n)
	}
	unknown := 0
	for _, e := range ofType(evs, eventlog.EventToolResult) {
		if e.ToolStatus == "unknown" {
			unknown++
		}
	}
	if unknown != 1 {
		t.Fatalf("interrupted: %d unknown-outcome tool results, want 1", unknown)
	}
	turns := len(ofType(evs, eventlog.EventTurnStarted))
	w.mustRun("resume", id)
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != turns {
		t.Fatalf("interrupted: a second resume started %d more turn(s)", n-turns)
	}
	if !bytes.HasPrefix(logOf("interrupted"), before) {
		t.Fatal("interrupted: the log was rewritten, not appended to")
	}
	if s := w.session(id); s.Format != state.Format || s.State != state.StateWaitingForInput {
		t.Fatalf("interrupted after resume: format %d state %s", s.Format, s.State)
	}
	if r := w.mustRun("prompt", id, "recall"); !strings.Contains(r.stdout, "MANGO") {
		t.Fatalf("interrupted: the restored agent does not recall MANGO: %s", r)
	}
	if r := w.mustRun("prompt", byTitle["idle"].ID, "recall"); !strings.Contains(r.stdout, "PINEAPPLE") {
		t.Fatalf("idle: the restored agent does not recall PINEAPPLE: %s", r)
	}

	leased := byTitle["leased"].ID
	if r := w.run("resume", leased, "--holder", "someone-else"); r.code != 3 {
		t.Fatalf("leased: resume by another holder: %s", r)
	}
	w.mustRun("resume", leased, "--holder", goldenLeaseHolder)
	if text := agentText(w.events(leased), ""); strings.Count(text, "queued while leased") != 1 {
		t.Fatalf("leased: the queued input was not served once: %q", text)
	}
	for _, title := range []string{"paused", "done"} {
		if r := w.run("resume", byTitle[title].ID); r.code != 5 {
			t.Fatalf("%s: resume: %s", title, r)
		}
	}
}

// checkGoldenDoctor checks that doctor reports the home's format (upgraded on
// first use) and the records of an older format.
func checkGoldenDoctor(t *testing.T, w *world, format, records int) {
	var report struct {
		Checks []struct{ Name, Message string }
	}
	decodeJSON(t, w.run("--json", "doctor").stdout, &report)
	msg := ""
	for _, c := range report.Checks {
		if c.Name == "format" {
			msg = c.Message
		}
	}
	if !strings.HasPrefix(msg, "home format "+strconv.Itoa(state.Format)+" ") {
		t.Fatalf("doctor's format check: %q", msg)
	}
	if older := strconv.Itoa(records) + " record(s) of an older format"; (format < state.Format) != strings.Contains(msg, older) {
		t.Fatalf("doctor's format check for a home of format %d: %q", format, msg)
	}
}
