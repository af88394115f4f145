package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// namedRepo is a git repository with one commit at DIR/name.
func namedRepo(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	repo := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644)
	git(t, repo, "add", "f")
	git(t, repo, "commit", "-q", "-m", "init")
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		repo = r
	}
	return repo
}

// in is the world seen from another directory.
func (w *world) in(dir string) *world {
	c := *w
	c.cwd = dir
	return &c
}

func TestLatest_StaysInTheWorkspaceItIsRunFromAndSaysWhichSessionItPicked(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1") // nothing lingers
	alpha, beta := namedRepo(t, "alpha"), namedRepo(t, "beta")
	twin := namedRepo(t, "alpha") // another clone with the same name, elsewhere
	idA, r := w.in(alpha).start("remember ALPHA")
	if r.code != 0 {
		t.Fatal(r)
	}
	idB, r := w.in(filepath.Join(beta, "sub")).start("remember BETA")
	if r.code != 0 {
		t.Fatal(r)
	}
	idT, r := w.in(twin).start("remember TWIN")
	if r.code != 0 {
		t.Fatal(r)
	}

	// From a subdirectory of alpha, the newest session anywhere (the twin's) is not taken.
	r = w.in(filepath.Join(alpha, "sub")).mustRun("prompt", "--latest", "recall")
	if !strings.Contains(r.stdout, "ALPHA") || strings.Contains(r.stdout, "TWIN") || strings.Contains(r.stdout, "BETA") {
		t.Fatalf("prompt --latest from alpha/sub went elsewhere:\n%s", r)
	}
	if want := `kandev: session ` + idA + ` "remember ALPHA" in alpha`; strings.Count(r.stderr, want) != 1 {
		t.Fatalf("stderr does not name the session once (%q):\n%s", want, r)
	}
	r = w.in(beta).mustRun("prompt", "--latest", "recall")
	if !strings.Contains(r.stdout, "BETA") || !strings.Contains(r.stderr, `kandev: session `+idB+` "remember BETA" in beta`) {
		t.Fatalf("prompt --latest from beta:\n%s", r)
	}
	r = w.in(twin).mustRun("prompt", "--latest", "recall")
	if !strings.Contains(r.stdout, "TWIN") || !strings.Contains(r.stderr, idT) {
		t.Fatalf("prompt --latest from the twin clone:\n%s", r)
	}

	// --all-workspaces takes the newest anywhere; --workspace names another.
	statusID := func(w *world, args ...string) string {
		t.Helper()
		var st struct{ Session struct{ ID string } }
		decodeJSON(t, w.mustRun(append([]string{"--json", "status", "--latest"}, args...)...).stdout, &st)
		return st.Session.ID
	}
	if got := statusID(w.in(beta), "--all-workspaces"); got != idT {
		t.Fatalf("status --latest --all-workspaces from beta picked %s, want the twin's %s", got, idT)
	}
	if got := statusID(w.in(alpha), "--workspace", "beta"); got != idB {
		t.Fatalf("--workspace beta picked %s, want %s", got, idB)
	}
	if got := statusID(w, "--cwd", filepath.Join(beta, "sub")); got != idB {
		t.Fatalf("--cwd beta/sub picked %s, want %s", got, idB)
	}
	// JSON output carries no announcement.
	if r := w.in(alpha).mustRun("--json", "status", "--latest"); strings.Contains(r.stderr, "kandev: session") {
		t.Fatalf("--json announced the choice on stderr:\n%s", r)
	}

	// Commands that used to refuse --latest take it, through the same selector.
	r = w.in(alpha).mustRun("done", "--latest")
	if !strings.Contains(r.stdout, idA+" is COMPLETED") || !strings.Contains(r.stderr, idA) {
		t.Fatalf("done --latest in alpha:\n%s", r)
	}
	r = w.in(alpha).run("prompt", "--latest", "recall")
	if r.code != 2 || !strings.Contains(r.stderr, "not finished") {
		t.Fatalf("prompt --latest with only a finished session in alpha: want exit 2 saying why\n%s", r)
	}
	for _, args := range [][]string{{"wait", "--latest", "--until", "idle", "--timeout", "10s"}, {"events", "--latest", "--type", "turn_ended"}, {"recap", "--latest"}} {
		if r := w.in(beta).run(args...); r.code != 0 || !strings.Contains(r.stderr, "kandev: session "+idB) {
			t.Fatalf("kandev %s from beta:\n%s", strings.Join(args, " "), r)
		}
	}
	// Nothing lingers: close --latest has nothing to close, as close ID would not.
	if r := w.in(beta).run("close", "--latest"); r.code != 0 || !strings.Contains(r.stdout, "nothing to close") {
		t.Fatalf("close --latest with nothing running:\n%s", r)
	}
	if r := w.in(alpha).mustRun("wait", "--latest", "--until", "done", "--timeout", "10s"); !strings.Contains(r.stdout, idA) {
		t.Fatalf("wait --latest from alpha:\n%s", r)
	}

	// A directory with no session of its own: not found, pointing at the others.
	r = w.in(t.TempDir()).run("status", "--latest")
	if r.code != 4 || !strings.Contains(r.stderr, "3 in other workspaces") || !strings.Contains(r.stderr, "--all-workspaces") {
		t.Fatalf("status --latest from an empty directory: want exit 4 naming the way out\n%s", r)
	}
}

func TestLatest_EmptyHomeIsNotFound(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.run("status", "--latest")
	if r.code != 4 || !strings.Contains(r.stderr, "no sessions yet") {
		t.Fatalf("want exit 4:\n%s", r)
	}
	r = w.run("--json", "resume", "--latest")
	if r.code != 4 || !strings.Contains(r.stdout, `"not_found"`) {
		t.Fatalf("want exit 4 with a not_found error object:\n%s", r)
	}
}

// resume --latest and detach --latest weigh leases for the holder they run
// for: another holder's live lease is not resumable for me, and is the one
// that holder detaches from.
func TestLatest_WeighsLeasesForTheHolderItRunsFor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	older, _ := w.start("remember OLD")
	newer, _ := w.start("remember NEW")
	w.mustRun("resume", newer, "--holder", "editor:x")
	pick := func(args ...string) string {
		t.Helper()
		r := w.mustRun(args...)
		for _, id := range []string{older, newer} {
			if strings.Contains(r.stderr, "kandev: session "+id) {
				return id
			}
		}
		t.Fatalf("kandev %v named no session:\n%s", args, r)
		return ""
	}
	if got := pick("resume", "--latest"); got != older {
		t.Fatalf("resume --latest took %s, held by editor:x; want %s", got, older)
	}
	if got := pick("resume", "--latest", "--holder", "editor:x"); got != newer {
		t.Fatalf("resume --latest --holder editor:x took %s, want its own %s", got, newer)
	}
	if got := pick("detach", "--latest", "--holder", "editor:x"); got != newer {
		t.Fatalf("detach --latest --holder editor:x took %s, want %s", got, newer)
	}
}

// recover without --all stays in the current workspace as --latest does: a
// same-named clone elsewhere is another workspace.
func TestRecover_DefaultsToTheWorkspaceOfTheDirectoryNotItsName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	mine, twin := namedRepo(t, "api"), namedRepo(t, "api")
	var ids []string
	for _, dir := range []string{mine, twin} {
		id, _ := w.in(dir).start()
		w.in(dir).killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", id, "/say working\n/sleep 5000")
		ids = append(ids, id)
	}
	var out struct {
		Recovered []struct{ ID, Outcome string }
	}
	decodeJSON(t, w.in(mine).mustRun("--json", "recover").stdout, &out)
	if len(out.Recovered) != 1 || out.Recovered[0].ID != ids[0] {
		t.Fatalf("recover from %s: %+v, want only %s", mine, out.Recovered, ids[0])
	}
	if continuations(w.events(ids[1])) != 0 {
		t.Fatal("the twin clone's session was continued")
	}
}
