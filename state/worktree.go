package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Worktree is where a session's agent works when its cwd is inside a git
// repository (SPEC 3.5).
type Worktree struct {
	Path    string `json:"path"`   // top level of the work tree (for a linked worktree: its own top level)
	Branch  string `json:"branch"` // short branch name, "" when HEAD is detached
	Valid   bool   `json:"valid"`
	Problem string `json:"problem,omitempty"`
	// Owned is set when kandev made this worktree for the session (start
	// or fork --worktree): only such a worktree is ever removed by prune.
	Owned bool `json:"owned,omitempty"`
	// OffBranch is set by CheckWorktree when the only problem is that the
	// work tree is on another branch (or a detached HEAD): a checkout fixes it.
	OffBranch bool `json:"-"`
}

// DetectWorktree finds the git work tree enclosing dir, including linked
// worktrees made by `git worktree add`. Path is the symlink-resolved top level
// of that work tree and Branch the branch HEAD points to, even when the branch
// has no commits yet. ok is false when dir is not inside a git work tree (a
// directory inside .git does not count); err reports an unreadable dir or
// repository.
func DetectWorktree(dir string) (w Worktree, ok bool, err error) {
	top, refs, ok, err := openWorkTree(dir)
	if err != nil || !ok {
		return Worktree{}, false, err
	}
	branch, err := headBranch(refs)
	if err != nil {
		return Worktree{}, false, fmt.Errorf("reading HEAD of git repository at %s: %w", top, err)
	}
	return Worktree{Path: top, Branch: branch, Valid: true}, true, nil
}

// CheckWorktree verifies a recorded worktree before a relaunch: its path must
// still exist, be the top level of a git work tree (linked worktrees
// included) and be on the recorded branch. A worktree recorded with a
// detached HEAD (Branch "") passes on any branch. It returns w with Valid set
// and, when invalid, Problem set to a one-line message naming the path.
func CheckWorktree(w Worktree) Worktree {
	w.Valid = false
	w.Problem, w.OffBranch = worktreeProblem(w)
	if w.Problem == "" {
		w.Valid = true
	}
	return w
}

// worktreeProblem returns the one-line reason w can no longer be used, or ""
// when it can, and whether only the branch is wrong.
func worktreeProblem(w Worktree) (string, bool) {
	if w.Path == "" {
		return "no worktree path was recorded", false
	}
	fi, err := os.Stat(w.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("worktree %s no longer exists", w.Path), false
	case err != nil:
		return fmt.Sprintf("cannot access worktree %s: %s", w.Path, oneLine(err)), false
	case !fi.IsDir():
		return fmt.Sprintf("worktree %s is not a directory", w.Path), false
	}
	cur, ok, err := DetectWorktree(w.Path)
	if err != nil {
		return fmt.Sprintf("cannot read the git repository of worktree %s: %s", w.Path, oneLine(err)), false
	}
	if !ok {
		return fmt.Sprintf("%s is not a git work tree", w.Path), false
	}
	if want, err := filepath.EvalSymlinks(w.Path); err == nil && want != cur.Path {
		return fmt.Sprintf("%s is not a git work tree (it lies inside the work tree %s)", w.Path, cur.Path), false
	}
	switch {
	case w.Branch == "" || cur.Branch == w.Branch:
		return "", false
	case cur.Branch == "":
		return fmt.Sprintf("worktree %s has a detached HEAD, session was started on %q", w.Path, w.Branch), true
	default:
		return fmt.Sprintf("worktree %s is on branch %q, session was started on %q", w.Path, cur.Branch, w.Branch), true
	}
}

// WorkspaceName returns the default workspace name for dir: the base name of
// the top level of its git work tree, or of dir itself outside one.
func WorkspaceName(dir string) string {
	if top, _, ok, err := openWorkTree(dir); err == nil && ok {
		return filepath.Base(top)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(dir)
}

// openWorkTree locates the work tree enclosing dir. It returns the
// symlink-resolved top level and the storage holding the work tree's HEAD; ok
// is false when dir is not inside a work tree.
func openWorkTree(dir string) (top string, refs storer.ReferenceStorer, ok bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, false, err
	}
	// Resolve symlinks first so the top level go-git reports (an ancestor of
	// the path it is given) is resolved too.
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", nil, false, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", nil, false, err
	}
	if !fi.IsDir() {
		return "", nil, false, fmt.Errorf("%s is not a directory", dir)
	}

	repo, err := git.PlainOpenWithOptions(resolved, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	switch {
	case errors.Is(err, git.ErrRepositoryNotExists):
		return "", nil, false, nil
	case errors.Is(err, git.ErrUnknownExtension), errors.Is(err, git.ErrUnsupportedExtensionRepositoryFormatVersion):
		// go-git refuses to open repositories using any config extension
		// (partial clones, extensions.worktreeConfig, ...), yet git works
		// in them and locating the work tree and HEAD needs none of them.
		top, refs, ok, err = locateWorkTree(resolved)
	case err != nil:
		return "", nil, false, fmt.Errorf("opening git repository for %s: %w", dir, err)
	default:
		var wt *git.Worktree
		wt, err = repo.Worktree()
		if errors.Is(err, git.ErrIsBareRepository) {
			return "", nil, false, nil
		}
		if err != nil {
			return "", nil, false, fmt.Errorf("opening git work tree for %s: %w", dir, err)
		}
		top, refs, ok = filepath.Clean(wt.Filesystem.Root()), repo.Storer, true
	}
	if err != nil || !ok {
		return "", nil, false, err
	}
	// Like git, treat the repository directory itself as outside the work tree.
	if rel, err := filepath.Rel(top, resolved); err == nil {
		if first, _, _ := strings.Cut(rel, string(filepath.Separator)); first == git.GitDirName {
			return "", nil, false, nil
		}
	}
	return top, refs, true, nil
}

// locateWorkTree finds the work tree enclosing dir (absolute and
// symlink-resolved) the way go-git's DetectDotGit does, without reading the
// repository config: the nearest ancestor holding a .git directory or a .git
// file pointing at the repository ("gitdir: ..."). Only the storage holding
// HEAD is opened; for a linked worktree that is its own git directory.
func locateWorkTree(dir string) (top string, refs storer.ReferenceStorer, ok bool, err error) {
	for top = dir; ; {
		fi, err := os.Stat(filepath.Join(top, git.GitDirName))
		if err == nil {
			gitDir := filepath.Join(top, git.GitDirName)
			if !fi.IsDir() {
				if gitDir, err = readGitFile(top); err != nil {
					return "", nil, false, err
				}
			}
			refs := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
			if _, err := refs.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
				return "", nil, false, nil
			}
			return top, refs, true, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", nil, false, err
		}
		parent := filepath.Dir(top)
		if parent == top {
			return "", nil, false, nil
		}
		top = parent
	}
}

// readGitFile returns the git directory named by the .git file in top.
func readGitFile(top string) (string, error) {
	b, err := os.ReadFile(filepath.Join(top, git.GitDirName))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gitDir, found := strings.CutPrefix(line, "gitdir: ")
	if !found {
		return "", fmt.Errorf("%s has no gitdir: line", filepath.Join(top, git.GitDirName))
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	return gitDir, nil
}

// headBranch returns the short name of the branch HEAD points to, or "" when
// HEAD is detached. It reads HEAD without resolving it, so an unborn branch
// (no commits yet) is still reported.
func headBranch(refs storer.ReferenceStorer) (string, error) {
	head, err := refs.Reference(plumbing.HEAD)
	if err != nil {
		return "", err
	}
	if head.Type() != plumbing.SymbolicReference || !head.Target().IsBranch() {
		return "", nil
	}
	return strings.TrimPrefix(head.Target().String(), "refs/heads/"), nil
}

// oneLine flattens err's message so it fits on a single line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
