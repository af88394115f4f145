package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runGit runs the git CLI in dir with a configuration isolated from the
// user's, failing the test on error.
func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=kandev test", "GIT_AUTHOR_EMAIL=test@kandev.invalid",
		"GIT_COMMITTER_NAME=kandev test", "GIT_COMMITTER_EMAIL=test@kandev.invalid",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// tempDir returns a fresh symlink-resolved directory that git does not see as
// part of any work tree, skipping the test when git is unavailable.
func tempDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not available")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if exec.Command("git", "-C", dir, "rev-parse", "--git-dir").Run() == nil {
		t.Skipf("temporary directory %s is inside a git repository", dir)
	}
	return dir
}

// newRepo creates a repository named name in parent on branch main, with one
// commit when commit is true, and returns its path.
func newRepo(t *testing.T, parent, name string, commit bool) string {
	t.Helper()
	repo := filepath.Join(parent, name)
	runGit(t, parent, "init", "-q", "-b", "main", name)
	if commit {
		runGit(t, repo, "commit", "-q", "--allow-empty", "-m", "initial")
	}
	return repo
}

func mkdirAll(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDetectWorktree(t *testing.T) {
	tests := []struct {
		name string
		// setup builds fixtures under root and returns the directory to
		// detect from and the expected work tree (Path "" means ok=false).
		setup func(t *testing.T, root string) (dir string, want Worktree)
	}{
		{"FindsRepoFromSubdirectory", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			return mkdirAll(t, filepath.Join(repo, "a", "b")), Worktree{Path: repo, Branch: "main"}
		}},
		{"FindsRepoFromTopLevel", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			return repo, Worktree{Path: repo, Branch: "main"}
		}},
		{"ReportsUnbornBranchOfRepoWithoutCommits", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "empty", false)
			return repo, Worktree{Path: repo, Branch: "main"}
		}},
		{"FindsLinkedWorktree", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			wt := filepath.Join(root, "wt")
			return mkdirAll(t, filepath.Join(wt, "sub")), Worktree{Path: wt, Branch: "feature"}
		}},
		{"KeepsMainWorktreeBranchWhenLinkedWorktreeExists", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			return repo, Worktree{Path: repo, Branch: "main"}
		}},
		{"ReportsEmptyBranchForDetachedHead", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "checkout", "-q", "--detach")
			return repo, Worktree{Path: repo, Branch: ""}
		}},
		{"KeepsSlashesInBranchName", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "checkout", "-q", "-b", "feature/login")
			return repo, Worktree{Path: repo, Branch: "feature/login"}
		}},
		{"ResolvesSymlinkedDirectory", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			link := filepath.Join(root, "link")
			if err := os.Symlink(mkdirAll(t, filepath.Join(repo, "sub")), link); err != nil {
				t.Skip("symlinks unsupported:", err)
			}
			return link, Worktree{Path: repo, Branch: "main"}
		}},
		{"FindsRepoWithConfigExtension", func(t *testing.T, root string) (string, Worktree) {
			// go-git refuses to open repositories using extensions.
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "config", "extensions.worktreeConfig", "true")
			return mkdirAll(t, filepath.Join(repo, "sub")), Worktree{Path: repo, Branch: "main"}
		}},
		{"FindsLinkedWorktreeOfRepoWithConfigExtension", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "config", "core.repositoryformatversion", "1")
			runGit(t, repo, "config", "extensions.worktreeConfig", "true")
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			wt := filepath.Join(root, "wt")
			return wt, Worktree{Path: wt, Branch: "feature"}
		}},
		{"RejectsDirectoryOutsideAnyRepo", func(t *testing.T, root string) (string, Worktree) {
			return mkdirAll(t, filepath.Join(root, "plain", "sub")), Worktree{}
		}},
		{"RejectsDirectoryInsideGitDir", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			return filepath.Join(repo, ".git", "refs"), Worktree{}
		}},
		{"RejectsBareRepository", func(t *testing.T, root string) (string, Worktree) {
			runGit(t, root, "init", "-q", "--bare", "bare.git")
			return filepath.Join(root, "bare.git"), Worktree{}
		}},
		{"RejectsLinkedWorktreeOfDeletedRepo", func(t *testing.T, root string) (string, Worktree) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(root, "wt"), Worktree{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, want := tt.setup(t, tempDir(t))
			got, ok, err := DetectWorktree(dir)
			if err != nil {
				t.Fatalf("DetectWorktree(%s): %v", dir, err)
			}
			if wantOK := want.Path != ""; ok != wantOK {
				t.Fatalf("DetectWorktree(%s) ok = %v, want %v (got %+v)", dir, ok, wantOK, got)
			}
			if ok {
				want.Valid = true
			}
			if got != want {
				t.Errorf("DetectWorktree(%s) = %+v, want %+v", dir, got, want)
			}
		})
	}
}

func TestDetectWorktree_ErrorsOnMissingDirectory(t *testing.T) {
	dir := filepath.Join(tempDir(t), "missing")
	if w, ok, err := DetectWorktree(dir); err == nil {
		t.Errorf("DetectWorktree(%s) = %+v, %v, nil; want an error", dir, w, ok)
	}
}

func TestCheckWorktree(t *testing.T) {
	tests := []struct {
		name string
		// setup builds a repository under root, records its worktree with
		// DetectWorktree, then changes it; it returns the recorded worktree
		// and the expected Problem ("" for valid), in which %s stands for the
		// recorded path.
		setup func(t *testing.T, root string) (recorded Worktree, problem string)
	}{
		{"AcceptsUnchangedWorktree", func(t *testing.T, root string) (Worktree, string) {
			return detect(t, newRepo(t, root, "proj", true)), ""
		}},
		{"AcceptsUnchangedRepoWithoutCommits", func(t *testing.T, root string) (Worktree, string) {
			return detect(t, newRepo(t, root, "proj", false)), ""
		}},
		{"AcceptsUnchangedLinkedWorktree", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			return detect(t, filepath.Join(root, "wt")), ""
		}},
		{"AcceptsAnyBranchWhenRecordedDetached", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "checkout", "-q", "--detach")
			w := detect(t, repo)
			runGit(t, repo, "checkout", "-q", "main")
			return w, ""
		}},
		{"ReportsDeletedDirectory", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			return w, "worktree %s no longer exists"
		}},
		{"ReportsMovedDirectory", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			if err := os.Rename(repo, repo+"-moved"); err != nil {
				t.Fatal(err)
			}
			return w, "worktree %s no longer exists"
		}},
		{"ReportsReplacementByNonGitDirectory", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			mkdirAll(t, repo)
			return w, "%s is not a git work tree"
		}},
		{"ReportsReplacementByFile", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(repo, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return w, "worktree %s is not a directory"
		}},
		{"ReportsReplacementByDirectoryInsideAnotherWorkTree", func(t *testing.T, root string) (Worktree, string) {
			outer := newRepo(t, root, "outer", true)
			inner := newRepo(t, outer, "inner", true)
			w := detect(t, inner)
			if err := os.RemoveAll(inner); err != nil {
				t.Fatal(err)
			}
			mkdirAll(t, inner)
			return w, "%s is not a git work tree (it lies inside the work tree " + outer + ")"
		}},
		{"ReportsLinkedWorktreeOfDeletedRepo", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			w := detect(t, filepath.Join(root, "wt"))
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			return w, "%s is not a git work tree"
		}},
		{"ReportsBranchSwitch", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			runGit(t, repo, "checkout", "-q", "-b", "other")
			return w, `worktree %s is on branch "other", session was started on "main"`
		}},
		{"ReportsBranchSwitchInLinkedWorktree", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../wt")
			wt := filepath.Join(root, "wt")
			w := detect(t, wt)
			runGit(t, wt, "checkout", "-q", "-b", "other")
			return w, `worktree %s is on branch "other", session was started on "feature"`
		}},
		{"ReportsDetachedHead", func(t *testing.T, root string) (Worktree, string) {
			repo := newRepo(t, root, "proj", true)
			w := detect(t, repo)
			runGit(t, repo, "checkout", "-q", "--detach")
			return w, `worktree %s has a detached HEAD, session was started on "main"`
		}},
		{"ReportsMissingPath", func(t *testing.T, root string) (Worktree, string) {
			return Worktree{Branch: "main"}, "no worktree path was recorded"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recorded, problem := tt.setup(t, tempDir(t))
			problem = strings.Replace(problem, "%s", recorded.Path, 1)
			// Start from the opposite verdict so both fields must be set.
			recorded.Valid, recorded.Problem = problem != "", "stale problem"
			got := CheckWorktree(recorded)
			want := recorded
			want.Valid, want.Problem = problem == "", problem
			want.OffBranch = strings.Contains(problem, "branch") || strings.Contains(problem, "detached")
			if got != want {
				t.Errorf("CheckWorktree(%+v)\n got %+v\nwant %+v", recorded, got, want)
			}
		})
	}
}

// detect returns the worktree DetectWorktree records for dir.
func detect(t *testing.T, dir string) Worktree {
	t.Helper()
	w, ok, err := DetectWorktree(dir)
	if err != nil || !ok {
		t.Fatalf("DetectWorktree(%s) = %+v, %v, %v", dir, w, ok, err)
	}
	return w
}

func TestWorkspaceName(t *testing.T) {
	root := tempDir(t)
	repo := newRepo(t, root, "proj", true)
	runGit(t, repo, "worktree", "add", "-q", "-b", "feature", "../proj-feature")
	tests := []struct {
		name, dir, want string
	}{
		{"UsesRepoNameFromSubdirectory", mkdirAll(t, filepath.Join(repo, "src", "pkg")), "proj"},
		{"UsesRepoNameAtTopLevel", repo, "proj"},
		{"UsesLinkedWorktreeName", mkdirAll(t, filepath.Join(root, "proj-feature", "docs")), "proj-feature"},
		{"UsesDirectoryNameOutsideRepo", mkdirAll(t, filepath.Join(root, "notes", "drafts")), "drafts"},
		{"UsesDirectoryNameWhenMissing", filepath.Join(root, "gone"), "gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WorkspaceName(tt.dir); got != tt.want {
				t.Errorf("WorkspaceName(%s) = %q, want %q", tt.dir, got, tt.want)
			}
		})
	}
}

func TestWorkspaceName_ResolvesRelativeDirectory(t *testing.T) {
	root := tempDir(t)
	t.Chdir(mkdirAll(t, filepath.Join(newRepo(t, root, "proj", true), "sub")))
	if got := WorkspaceName("."); got != "proj" {
		t.Errorf(`WorkspaceName(".") in a repo subdirectory = %q, want "proj"`, got)
	}
	t.Chdir(mkdirAll(t, filepath.Join(root, "plain")))
	if got := WorkspaceName("."); got != "plain" {
		t.Errorf(`WorkspaceName(".") outside a repo = %q, want "plain"`, got)
	}
}

// Removing a worktree deletes every file only it holds, so each of them
// counts as a change: an ignored .env as much as an uncommitted edit.
func TestWorktreeChanges_CountsEveryFileGitDoesNotTrackIgnoredOnesIncluded(t *testing.T) {
	repo := newRepo(t, tempDir(t), "app", false)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".env\nbuild/\n"), 0o644)
	runGit(t, repo, "add", ".gitignore")
	runGit(t, repo, "commit", "-q", "-m", "ignore")
	cases := []struct {
		name  string
		write string // a file to create, "" for none
		want  string // "" = clean
	}{
		{"clean", "", ""},
		{"ignored file", ".env", "!! .env"},
		{"ignored directory", "build/out.bin", "!! build/"},
		{"untracked file", "notes.txt", "?? notes.txt"},
		{"modified tracked file", ".gitignore", " M .gitignore"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.write != "" {
				mkdirAll(t, filepath.Dir(filepath.Join(repo, tc.write)))
				os.WriteFile(filepath.Join(repo, tc.write), []byte("SECRET=1\n"), 0o600)
			}
			changes, err := WorktreeChanges(repo)
			got := strings.Join(changes, "|")
			if err != nil || got != tc.want {
				t.Fatalf("WorktreeChanges = %q, %v; want %q", got, err, tc.want)
			}
			runGit(t, repo, "checkout", "-q", "--", ".")
			runGit(t, repo, "clean", "-q", "-fdx")
		})
	}
}
