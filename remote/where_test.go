package remote

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// repoRemote and cloneAt read a clone's remotes from its config (the
// common one for a linked worktree), and ask git when go-git's config
// reader may not read the config right (extensions).
func TestRepoRemote_ReadsTheRemotesOfAClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	gitIn(t, base, "init", "-q", "-b", "main", repo)
	gitIn(t, repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "one")
	gitIn(t, repo, "remote", "add", "origin", "git://example.invalid/r.git")
	gitIn(t, repo, "remote", "add", "local", "../bare.git")
	wt := filepath.Join(base, "linked")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "side", wt)

	for _, dir := range []string{repo, filepath.Join(wt)} {
		top, u, err := repoRemote(dir, "origin")
		if err != nil || top != dir || u != "git://example.invalid/r.git" {
			t.Errorf("repoRemote(%s, origin) = %q, %q, %v", dir, top, u, err)
		}
		if _, u, err := repoRemote(dir, "local"); err != nil || u != filepath.Join(dir, "../bare.git") {
			t.Errorf("repoRemote(%s, local) = %q, %v; want the path made absolute against the work tree", dir, u, err)
		}
		if _, _, err := repoRemote(dir, "nope"); !errors.Is(err, ErrNoRemote) {
			t.Errorf("repoRemote(%s, nope) error = %v, want ErrNoRemote", dir, err)
		}
		c, ok := cloneAt(dir)
		slices.Sort(c.URLs)
		if want := []string{filepath.Join(dir, "../bare.git"), "git://example.invalid/r.git"}; !ok || c.Path != dir || !slices.Equal(c.URLs, want) {
			t.Errorf("cloneAt(%s) = %+v, %v; want URLs %v", dir, c, ok, want)
		}
	}
	if _, _, err := repoRemote(base, "origin"); !errors.Is(err, ErrNoRemote) {
		t.Errorf("repoRemote outside a repository: error = %v, want ErrNoRemote", err)
	}

	// A config extension: git answers.
	gitIn(t, repo, "config", "core.repositoryformatversion", "1")
	gitIn(t, repo, "config", "extensions.worktreeConfig", "true")
	if _, u, err := repoRemote(repo, "origin"); err != nil || u != "git://example.invalid/r.git" {
		t.Errorf("with extensions.worktreeConfig: repoRemote = %q, %v", u, err)
	}
	if _, _, err := repoRemote(repo, "nope"); !errors.Is(err, ErrNoRemote) {
		t.Errorf("with extensions.worktreeConfig: repoRemote(nope) error = %v, want ErrNoRemote", err)
	}
}
