package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// hasMarker reports whether the log has a marker of kind whose summary contains text.
func hasMarker(evs []eventlog.Event, kind, text string) bool {
	for _, e := range evs {
		if e.Type == eventlog.EventMarker && e.Kind == kind && strings.Contains(e.Summary, text) {
			return true
		}
	}
	return false
}

// crashMidTurn SIGKILLs the owner of a prompt on id once the agent is answering.
func (w *world) crashMidTurn(id string, flags ...string) {
	w.t.Helper()
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, append(flags, "prompt", id, "/say working\n/sleep 5000")...)
	if s := w.session(id); s.State != state.StateRunning {
		w.t.Fatalf("no interrupted turn after the kill: %+v", s)
	}
}

// gitRepo makes a repository with one commit on branch feature.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(repo, 0o755)
	git(t, repo, "init", "-q", "-b", "feature")
	os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644)
	git(t, repo, "add", "f")
	git(t, repo, "commit", "-q", "-m", "init")
	return repo
}

type statusJSON struct {
	Status struct {
		NeedsResume bool `json:"needs_resume"`
		Interrupted bool
		Badge       string
		Reason      string
		IsResumable bool `json:"is_resumable"`
		Paused      string
		Pause       *state.Pause
		Next        string
	}
}

func (w *world) status(id string, flags ...string) statusJSON {
	w.t.Helper()
	var st statusJSON
	decodeJSON(w.t, w.mustRun(append(append([]string{"--json"}, flags...), "status", id)...).stdout, &st)
	return st
}

func TestPause_WrongBranchPausesAndCheckingOutBackContinuesOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	repo := gitRepo(t)
	id, r := w.start("--cwd", repo)
	if r.code != 0 {
		t.Fatal(r)
	}
	w.crashMidTurn(id)
	git(t, repo, "checkout", "-q", "-b", "other")
	for i := 0; i < 2; i++ {
		r = w.run("resume", id)
		if r.code != 5 || !strings.Contains(r.stderr, `"other"`) || !strings.Contains(r.stderr, "check out branch feature") {
			t.Fatalf("resume %d on the wrong branch: %s", i+1, r)
		}
	}
	st := w.status(id)
	if st.Status.Badge != "paused" || st.Status.Pause == nil || st.Status.Pause.Kind != state.PauseWorktree || st.Status.Next != "git -C "+repo+" checkout feature" {
		t.Fatalf("status on the wrong branch: %+v", st.Status)
	}
	if n := len(ofType(w.events(id), eventlog.EventMarker)); !hasMarker(w.events(id), "continuation_paused", `"other"`) || n == 0 {
		t.Fatal("no warning marker for the pause")
	}
	git(t, repo, "checkout", "-q", "feature")
	w.mustRun("resume", id)
	evs := w.events(id)
	if n := continuations(evs); n != 1 {
		t.Fatalf("%d continuations after checking out back, want 1", n)
	}
	if !hasMarker(evs, "continuation_resumed", "back on branch feature") {
		t.Fatal("no info marker saying the pause cleared")
	}
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after a second resume, want 1", n)
	}
	if st := w.status(id); st.Status.Badge != "idle" || st.Status.Pause != nil {
		t.Fatalf("status after the continuation: %+v", st.Status)
	}
}

func TestPause_NoInterruptedTurnNeverShowsThePauseWarning(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	repo := gitRepo(t)
	id, r := w.start("--cwd", repo, "/say hi")
	if r.code != 0 {
		t.Fatal(r)
	}
	git(t, repo, "checkout", "-q", "-b", "other")
	r = w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, `"other"`) || strings.Contains(r.stderr, "paused") {
		t.Fatalf("resume of an idle session on the wrong branch: %s", r)
	}
	if st := w.status(id); st.Status.Badge != "idle" || st.Status.Pause != nil || st.Status.IsResumable {
		t.Fatalf("status: %+v", st.Status)
	}
	if hasMarker(w.events(id), "continuation_paused", "") {
		t.Fatal("a pause marker without an interrupted turn")
	}
	git(t, repo, "checkout", "-q", "feature")
	if r := w.mustRun("resume", id); strings.Contains(r.stderr, "paused") {
		t.Fatalf("resume: %s", r)
	}
	if hasMarker(w.events(id), "continuation_paused", "") || continuations(w.events(id)) != 0 {
		t.Fatal("a pause or continuation without an interrupted turn")
	}
}

func TestPause_PermissionModeChangePausesUntilTheModeIsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	w.crashMidTurn(id, "--permissions", "approve-all")
	r := w.run("--permissions", "deny-all", "resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "approve-all") {
		t.Fatalf("resume under another mode: %s", r)
	}
	if st := w.status(id, "--permissions", "deny-all"); st.Status.Pause == nil || st.Status.Pause.Kind != state.PausePermissionModeChanged {
		t.Fatalf("status: %+v", st.Status)
	}
	w.mustRun("--permissions", "approve-all", "resume", id)
	evs := w.events(id)
	if continuations(evs) != 1 || !hasMarker(evs, "continuation_resumed", "approve-all") {
		t.Fatalf("continuations %d, cleared marker %v", continuations(evs), hasMarker(evs, "continuation_resumed", ""))
	}
}

func TestRepair_ThenResumeStillContinuesOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	w.crashMidTurn(id)
	record := filepath.Join(w.home, "sessions", id+".json")
	log := filepath.Join(w.home, "sessions", id+".jsonl")
	recBefore, _ := os.ReadFile(record)
	logBefore, _ := os.ReadFile(log)
	var rep struct {
		Repair struct {
			Turn    string `json:"interrupted_turn"`
			Pending string `json:"continuation_pending"`
		}
	}
	decodeJSON(t, w.mustRun("--json", "repair", id, "--dry-run").stdout, &rep)
	recAfter, _ := os.ReadFile(record)
	logAfter, _ := os.ReadFile(log)
	if string(recAfter) != string(recBefore) || string(logAfter) != string(logBefore) {
		t.Fatal("repair --dry-run wrote something")
	}
	if rep.Repair.Turn == "" || rep.Repair.Pending != rep.Repair.Turn {
		t.Fatalf("dry run: %+v", rep.Repair)
	}
	decodeJSON(t, w.mustRun("--json", "repair", id).stdout, &rep)
	if rep.Repair.Pending == "" {
		t.Fatalf("repair: %+v", rep.Repair)
	}
	if st := w.status(id); st.Status.Badge != "needs-resume" || st.Status.Next != "kandev resume "+id {
		t.Fatalf("status after repair: %+v", st.Status)
	}
	w.mustRun("repair", id)
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after repair and resume, want 1", n)
	}
	w.mustRun("resume", id)
	if n := continuations(w.events(id)); n != 1 {
		t.Fatalf("%d continuations after a second resume, want 1", n)
	}
}

// sessionsInEveryState makes one session per situation resume can meet and
// returns them by name.
func sessionsInEveryState(t *testing.T, w *world) map[string]string {
	t.Helper()
	ids := map[string]string{}
	ids["idle"], _ = w.start("/say hi")
	ids["interrupted"], _ = w.start()
	w.crashMidTurn(ids["interrupted"])
	ids["repaired"], _ = w.start()
	w.crashMidTurn(ids["repaired"])
	w.mustRun("repair", ids["repaired"])
	ids["paused"], _ = w.start()
	w.crashMidTurn(ids["paused"], "--permissions", "approve-all")
	ids["stopped"], _ = w.start()
	w.crashMidTurn(ids["stopped"])
	w.mustRun("stop", ids["stopped"])
	ids["done"], _ = w.start()
	w.mustRun("done", ids["done"])
	ids["leased"], _ = w.start()
	w.mustRun("resume", ids["leased"], "--holder", "editor:other")
	repo := gitRepo(t)
	ids["off-branch"], _ = w.start("--cwd", repo, "/say hi")
	git(t, repo, "checkout", "-q", "-b", "other")
	return ids
}

func TestList_ResumableContainsASessionIffResumeThenSucceeds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ids := sessionsInEveryState(t, w)
	var l struct{ Sessions []struct{ ID, Badge string } }
	decodeJSON(t, w.mustRun("--json", "list", "--resumable").stdout, &l)
	listed := map[string]bool{}
	for _, s := range l.Sessions {
		listed[s.ID] = true
	}
	for name, id := range ids {
		if is := w.status(id).Status.IsResumable; name == "done" && is {
			t.Errorf("%s: status says resumable", name)
		}
	}
	for name, id := range ids {
		r := w.run("resume", id)
		if listed[id] != (r.code == 0) {
			t.Errorf("%s: listed by --resumable %v, but resume: %s", name, listed[id], r)
		}
	}
	if len(listed) != 4 { // idle, interrupted, repaired, stopped
		t.Errorf("list --resumable offered %d sessions: %+v", len(listed), l.Sessions)
	}
}

func TestStatus_SuggestedNextCommandSucceeds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ids := sessionsInEveryState(t, w)
	for name, id := range ids {
		next := w.status(id).Status.Next
		words := strings.Fields(strings.ReplaceAll(next, `"..."`, "NEXT"))
		for i, word := range words {
			if word == "NEXT" {
				words[i] = "/say next"
			}
		}
		var r result
		switch {
		case len(words) > 1 && words[0] == "kandev":
			r = w.run(words[1:]...)
		case len(words) > 1 && words[0] == "git":
			out, err := exec.Command("git", words[1:]...).CombinedOutput()
			if err != nil {
				r.code, r.stderr = 1, string(out)
			}
		default:
			t.Fatalf("%s: next %q is no command", name, next)
		}
		if r.code != 0 {
			t.Errorf("%s: next %q: %s", name, next, r)
		}
	}
}

func TestLease_ConflictMessageOffersWhatEachCommandAccepts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	w.mustRun("resume", id, "--holder", "editor:other")
	release := "kandev detach " + id + " --holder editor:other"
	for _, tc := range []struct {
		args  []string
		force bool
	}{
		{[]string{"resume", id}, false},
		{[]string{"detach", id}, false},
		{[]string{"prompt", id, "hi"}, true},
	} {
		r := w.run(tc.args...)
		if r.code != 3 || !strings.Contains(r.stderr, release) || strings.Contains(r.stderr, "--force") != tc.force {
			t.Errorf("%s: %s", tc.args[0], r)
		}
	}
	w.mustRun("detach", id, "--holder", "editor:other")
	w.mustRun("resume", id)
}
