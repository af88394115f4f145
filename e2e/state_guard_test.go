package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// guardWorld is a world whose owners never linger.
func guardWorld(t *testing.T) *world {
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	return w
}

// repoIgnoringEnv is a git repository whose .gitignore names .env.
func repoIgnoringEnv(t *testing.T) string {
	repo := gitRepo(t)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".env\n"), 0o644)
	git(t, repo, "add", ".gitignore")
	git(t, repo, "commit", "-q", "-m", "ignore .env")
	return repo
}

func TestImportPrune_ABundleClaimingAUsersWorktreeNeverGetsItDeleted(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	w.cwd = repoIgnoringEnv(t)
	mine := filepath.Join(filepath.Dir(w.cwd), "my-worktree")
	git(t, w.cwd, "worktree", "add", "-q", "-b", "mine", mine)
	os.WriteFile(filepath.Join(mine, ".env"), []byte("API_KEY=only-copy\n"), 0o600)
	id, r := w.start("hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	// The bundle is edited to say kandev made the user's worktree.
	bundle := w.mustRun("export", id).stdout
	head, rest, _ := strings.Cut(bundle, "\n")
	var hdr map[string]any
	decodeJSON(t, head, &hdr)
	hdr["session"].(map[string]any)["worktree"] = map[string]any{"path": mine, "branch": "mine", "valid": true, "owned": true}
	edited, _ := json.Marshal(hdr)
	path := filepath.Join(t.TempDir(), "edited.kandev.jsonl")
	os.WriteFile(path, append(append(edited, '\n'), rest...), 0o600)

	imported := strings.TrimSpace(strings.SplitN(w.mustRun("import", path).stdout, "\n", 2)[0])
	if wt := w.session(imported).Worktree; wt == nil || wt.Owned || wt.Path != mine {
		t.Fatalf("imported worktree %+v: the path is kept, ownership never", wt)
	}
	w.mustRun("done", imported)
	out := w.mustRun("prune").stdout
	if !strings.Contains(out, "pruned "+imported) || strings.Contains(out, "and its worktree") {
		t.Fatalf("prune output:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(mine, ".env")); err != nil || string(b) != "API_KEY=only-copy\n" {
		t.Fatalf("the user's worktree lost its .env: %q %v", b, err)
	}
}

func TestPrune_KeepsAKandevWorktreeWhoseOnlyChangeIsAnIgnoredFileAndNamesIt(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	w.cwd = repoIgnoringEnv(t)
	id, r := w.start("--worktree", "hello")
	if r.code != 0 {
		t.Fatal(r)
	}
	wt := w.session(id).Worktree
	if wt == nil || !wt.Owned {
		t.Fatalf("worktree %+v", wt)
	}
	env := filepath.Join(wt.Path, ".env")
	os.WriteFile(env, []byte("API_KEY=only-copy\n"), 0o600)
	w.mustRun("done", id)
	dry := w.mustRun("prune", "--dry-run").stdout
	out := w.mustRun("prune").stdout
	for _, o := range []string{dry, out} {
		if !strings.Contains(o, "kept "+id+": its worktree "+wt.Path+" has 1 uncommitted, untracked or ignored file(s) (.env)") {
			t.Fatalf("prune output does not name the worktree and its ignored file:\n%s", o)
		}
	}
	if _, err := os.Stat(env); err != nil {
		t.Fatalf("the ignored .env was deleted: %v", err)
	}
	if w.session(id) == nil {
		t.Fatal("the session was pruned without its worktree")
	}
	os.Remove(env)
	if out := w.mustRun("prune").stdout; !strings.Contains(out, "pruned "+id) {
		t.Fatalf("once the file is gone the session and worktree go:\n%s", out)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatalf("clean worktree stays: %v", err)
	}
}

func TestDoneReleasesTheCallersLeaseAndPruneIsNotHeldBackByIt(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	w.env = append(w.env, "KANDEV_HOLDER=me")
	h, _ := state.OpenHome(w.home)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("resume", id)
	if l, _ := h.ReadLease(id); !l.Live(time.Now()) || l.AttachedTo != "me" {
		t.Fatalf("resume took no lease: %+v", l)
	}
	w.mustRun("done", id)
	if l, _ := h.ReadLease(id); l != nil {
		t.Fatalf("done left the caller's lease: %+v", l)
	}
	// A lease of our own that outlived done (an older kandev) binds nobody.
	other, _ := w.start("remember PEAR")
	w.mustRun("done", other)
	if _, err := h.Attach(other, "me", time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	out := w.mustRun("prune").stdout
	if !strings.Contains(out, "pruned "+id) || !strings.Contains(out, "pruned "+other) {
		t.Fatalf("prune output:\n%s", out)
	}
	if _, err := os.Stat(h.LeasePath(other)); !os.IsNotExist(err) {
		t.Fatalf("the lease went not with its session: %v", err)
	}
}

func TestPrune_KeepsAParentWhileASessionStartedFromItNeedsItsHistory(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	parent, _ := w.start("remember APPLE")
	w.mustRun("done", parent)
	child, r := w.start("--parent", parent, "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "APPLE") {
		t.Fatalf("the follow-up does not recall its parent's history: %s", r)
	}
	out := w.mustRun("prune").stdout
	if !strings.Contains(out, "kept "+parent+": session "+child+" was started from it (kandev start --parent)") {
		t.Fatalf("prune output:\n%s", out)
	}
	if got := w.mustRun("prompt", child, "recall").stdout; !strings.Contains(got, "APPLE") {
		t.Fatalf("after prune the follow-up recalls %q", got)
	}
	w.mustRun("done", child)
	out = w.mustRun("prune").stdout
	if !strings.Contains(out, "pruned "+child) || !strings.Contains(out, "pruned "+parent) {
		t.Fatalf("once the follow-up is finished both go, child first:\n%s", out)
	}
}

func TestPrune_RemovesTheLogOfAForkKilledBeforeItsRecord(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	h, _ := state.OpenHome(w.home)
	parent, _ := w.start("remember APPLE")
	child := strings.TrimSpace(strings.SplitN(w.mustRun("fork", parent).stdout, "\n", 2)[0])
	// The fork's process was killed between its log and its record.
	os.Remove(h.RecordPath(child))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(h.LogPath(child), old, old)
	// An import's leftover is kept: importing again finishes it.
	importLeft := h.LogPath("20261201-000000-aaaaaaaa")
	os.WriteFile(importLeft, []byte(`{"seq":1,"type":"state","session_id":"20261201-000000-aaaaaaaa","state":"WAITING_FOR_INPUT"}`+"\n"), 0o600)
	os.Chtimes(importLeft, old, old)

	if doc := w.run("doctor"); !strings.Contains(doc.stdout, h.LogPath(child)+" is the log of a fork killed before its record was written") {
		t.Fatalf("doctor:\n%s", doc)
	}
	dry := w.mustRun("prune", "--dry-run").stdout
	if !strings.Contains(dry, "would prune leftover log of a fork killed before its record was written "+h.LogPath(child)) {
		t.Fatalf("prune --dry-run:\n%s", dry)
	}
	w.mustRun("prune")
	if _, err := os.Stat(h.LogPath(child)); !os.IsNotExist(err) {
		t.Fatalf("the fork's leftover log stays: %v", err)
	}
	if _, err := os.Stat(importLeft); err != nil {
		t.Fatalf("an import's leftover log was removed: %v", err)
	}
	if _, err := os.Stat(h.LogPath(parent)); err != nil {
		t.Fatalf("the parent's log: %v", err)
	}
}

func TestRewind_ADeniedWriteIsNotListedAsAFileChange(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	id, r := w.start("--permissions", "deny-all", "/write denied.txt never written")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("--permissions", "approve-all", "prompt", id, "/write allowed.txt written")
	var out struct {
		Rewind struct {
			FileChanges []struct{ Title string } `json:"file_changes"`
		} `json:"rewind"`
	}
	decodeJSON(t, w.mustRun("--json", "clear", id).stdout, &out)
	if len(out.Rewind.FileChanges) != 1 || !strings.Contains(out.Rewind.FileChanges[0].Title, "allowed.txt") {
		t.Fatalf("file changes %+v: want only the allowed write", out.Rewind.FileChanges)
	}
}

func TestSymlinks_ADanglingLockOrOwnerOutLinkIsRefusedAndItsTargetNeverCreated(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	h, _ := state.OpenHome(w.home)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	outside := t.TempDir()
	for _, path := range []string{h.LockPath(id), h.OwnerOutPath(id)} {
		os.Remove(path)
		if err := os.Symlink(filepath.Join(outside, filepath.Base(path)), path); err != nil {
			t.Fatal(err)
		}
	}
	w.run("status", id)
	w.run("list")
	r = w.run("prompt", id, "recall")
	if r.code == 0 || !strings.Contains(r.stderr, h.LockPath(id)+" is a symbolic link") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("prompt through a linked owner lock: want one line naming it:\n%s", r)
	}
	os.Remove(h.LockPath(id)) // now only owner.out is a link: a lingering owner is started detached
	r = w.run("prompt", "--linger", "5s", id, "recall")
	if r.code == 0 || !strings.Contains(r.stderr, h.OwnerOutPath(id)+" is a symbolic link") {
		t.Fatalf("a detached owner writing through a linked owner.out: want a refusal naming it:\n%s", r)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("kandev created %v outside the home", entries)
	}
	if doc := w.run("doctor"); !strings.Contains(doc.stdout, h.OwnerOutPath(id)+" is a symbolic link") || !strings.Contains(doc.stdout, "fix: rm "+h.OwnerOutPath(id)) {
		t.Fatalf("doctor does not name the link:\n%s", doc)
	}
}

func TestHostileSeq_ALastLineWithABrokenSeqLosesNothingAndBreaksNoNumbering(t *testing.T) {
	t.Parallel()
	for _, seq := range []string{"-1", "9223372036854775807", "11.5"} {
		t.Run(seq, func(t *testing.T) {
			w := guardWorld(t)
			h, _ := state.OpenHome(w.home)
			id, r := w.start("remember APPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			hostile := `{"seq":` + seq + `,"type":"agent_message","session_id":"` + id + `","content":"pasted"}` + "\n"
			f, _ := os.OpenFile(h.LogPath(id), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(hostile)
			f.Close()

			r = w.mustRun("prompt", id, "recall")
			if !strings.Contains(r.stdout, "APPLE") {
				t.Fatalf("the next turn: %s", r)
			}
			evs, rep, err := eventlog.ReadAll(h.LogPath(id))
			if err != nil || len(rep.CorruptLines) != 1 {
				t.Fatalf("%v %+v", err, rep)
			}
			assertNoSeqGap(t, evs)
			if last := evs[len(evs)-1]; last.Seq != int64(len(evs)) {
				t.Fatalf("last seq %d of %d events", last.Seq, len(evs))
			}
			if b, _ := os.ReadFile(h.LogPath(id)); !strings.Contains(string(b), hostile) {
				t.Fatal("the hostile line was lost")
			}
			exp := w.mustRun("export", id)
			if !strings.Contains(exp.stderr, "kandev doctor") || strings.Count(exp.stdout, "\n") != len(evs)+1 {
				t.Fatalf("export: want the readable events and a warning pointing at doctor:\n%s", exp.stderr)
			}
			doc := w.run("doctor")
			if doc.code != 1 || !strings.Contains(doc.stdout, "1 line(s) that are not readable events (first after seq") {
				t.Fatalf("doctor:\n%s", doc)
			}
		})
	}
}

func TestHostileRecord_AFieldNestedTooDeepIsOneLineErrorThatPointsAtDoctor(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{5000, 100000} {
		t.Run(strconv.Itoa(depth), func(t *testing.T) {
			w := guardWorld(t)
			h, _ := state.OpenHome(w.home)
			id, r := w.start("remember APPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			b, _ := os.ReadFile(h.RecordPath(id))
			rec := strings.TrimSuffix(strings.TrimSpace(string(b)), "}") + `,"from_the_future":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}\n"
			os.WriteFile(h.RecordPath(id), []byte(rec), 0o600)
			for _, args := range [][]string{{"status", id}, {"prompt", id, "recall"}, {"done", id}} {
				r := w.run(args...)
				if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, h.RecordPath(id)) ||
					!strings.Contains(r.stderr, "kandev doctor") || strings.Contains(r.stderr, "goroutine") || len(r.stderr) > 400 {
					t.Fatalf("kandev %s: want exit 1 and one line naming the record and kandev doctor:\n%s", args[0], r)
				}
			}
			if after, _ := os.ReadFile(h.RecordPath(id)); string(after) != rec {
				t.Fatal("the record was rewritten")
			}
			if doc := w.run("doctor"); !strings.Contains(doc.stdout, "nested too deep") || !strings.Contains(doc.stdout, "fix: mv "+h.RecordPath(id)) {
				t.Fatalf("doctor:\n%s", doc)
			}
		})
	}
}

func TestReaders_ACorruptLineInTheMiddleIsNamedNotSilentlyDropped(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	h, _ := state.OpenHome(w.home)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "remember PEAR")
	b, _ := os.ReadFile(h.LogPath(id))
	lines := strings.SplitAfter(string(b), "\n")
	mid := len(lines) / 2
	var prev eventlog.Event
	json.Unmarshal([]byte(lines[mid-1]), &prev)
	broken := strings.Join(lines[:mid], "") + "{\"seq\":99,\"type\":\"agent_mess\n" + strings.Join(lines[mid:], "")
	os.WriteFile(h.LogPath(id), []byte(broken), 0o600)
	for _, cmd := range []string{"transcript", "recap"} {
		r := w.mustRun(cmd, id)
		want := "skipped 1 corrupt line(s) of " + h.LogPath(id) + " that are not readable events (after seq " + strconv.FormatInt(prev.Seq, 10)
		if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "kandev doctor") {
			t.Fatalf("kandev %s: want a warning %q naming kandev doctor:\n%s", cmd, want, r.stderr)
		}
	}
}

func TestPrune_AWorktreeSharedByAForkGoesOnlyWithTheLastSessionInIt(t *testing.T) {
	t.Parallel()
	w := guardWorld(t)
	w.cwd = repoIgnoringEnv(t)
	parent, r := w.start("--worktree", "remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	wt := w.session(parent).Worktree
	child := strings.TrimSpace(strings.SplitN(w.mustRun("fork", parent).stdout, "\n", 2)[0])
	if c := w.session(child).Worktree; c == nil || c.Path != wt.Path {
		t.Fatalf("the fork works in %+v, want its parent's %s", c, wt.Path)
	}
	w.mustRun("done", child)
	out := w.mustRun("prune").stdout
	if !strings.Contains(out, "pruned "+child) || !strings.Contains(out, "its worktree "+wt.Path+" stays: session "+parent+" works in it too") {
		t.Fatalf("prune output:\n%s", out)
	}
	if _, err := os.Stat(wt.Path); err != nil {
		t.Fatalf("pruning the fork removed the worktree its parent still works in: %v", err)
	}
	if got := w.mustRun("prompt", parent, "recall").stdout; !strings.Contains(got, "APPLE") {
		t.Fatalf("the parent after prune: %s", got)
	}
	w.mustRun("done", parent)
	if out := w.mustRun("prune").stdout; !strings.Contains(out, "pruned "+parent) || !strings.Contains(out, "and its worktree "+wt.Path) {
		t.Fatalf("prune output:\n%s", out)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatalf("the last session's worktree stays: %v", err)
	}
}
