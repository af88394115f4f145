package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
