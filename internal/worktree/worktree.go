// Package worktree finds, checks, adds and removes the git work trees
// sessions run in (see docs/resume.md).
package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// gitDirName is the name of a work tree's repository directory (or file).
const gitDirName = ".git"

// Worktree is where a session's agent works when its cwd is inside a git
// repository (see docs/resume.md).
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
	top, head, ok, err := openWorkTree(dir)
	if err != nil || !ok {
		return Worktree{}, false, err
	}
	return Worktree{Path: top, Branch: headBranch(head), Valid: true}, true, nil
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
// symlink-resolved top level and the work tree's HEAD; ok is false when dir
// is not inside a work tree.
func openWorkTree(dir string) (top string, head *plumbing.Reference, ok bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, false, err
	}
	// Resolve symlinks first so the top level found (an ancestor of the
	// path given) is resolved too.
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

	top, head, ok, err = locateWorkTree(resolved)
	if err != nil || !ok {
		return "", nil, false, err
	}
	// Like git, treat the repository directory itself as outside the work tree.
	if rel, err := filepath.Rel(top, resolved); err == nil {
		if first, _, _ := strings.Cut(rel, string(filepath.Separator)); first == gitDirName {
			return "", nil, false, nil
		}
	}
	return top, head, true, nil
}

// locateWorkTree finds the work tree enclosing dir (absolute and
// symlink-resolved) the way git does: the nearest ancestor holding a .git
// directory or a .git file pointing at the repository ("gitdir: ..."), and
// none when that repository has no HEAD. It returns that HEAD, which for a
// linked worktree is in its own git directory. Neither the repository config nor any other ref is
// read: git works in repositories whose config go-git refuses (extensions),
// and locating the work tree needs neither.
//
// Only go-git's plumbing package is used: its root package links the
// transports (net/http, x/crypto/ssh, OpenPGP) and their package
// initialisation into every kandev command (see docs/testing.md, start-up).
func locateWorkTree(dir string) (top string, head *plumbing.Reference, ok bool, err error) {
	for top = dir; ; {
		fi, err := os.Stat(filepath.Join(top, gitDirName))
		if err == nil {
			gitDir := filepath.Join(top, gitDirName)
			if !fi.IsDir() {
				if gitDir, err = readGitFile(top); err != nil {
					return "", nil, false, err
				}
			}
			head, err := readHead(gitDir)
			if errors.Is(err, os.ErrNotExist) {
				return "", nil, false, nil
			}
			if err != nil {
				return "", nil, false, fmt.Errorf("reading HEAD of git repository at %s: %w", top, err)
			}
			return top, head, true, nil
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

// CommonGitDir is the git directory that holds the repository's config for
// the work tree whose top level is top: its .git directory, or for a linked
// worktree (a .git file) the directory its gitdir's commondir names.
func CommonGitDir(top string) (string, error) {
	gitDir := filepath.Join(top, gitDirName)
	fi, err := os.Stat(gitDir)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return gitDir, nil
	}
	if gitDir, err = readGitFile(top); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, os.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", err
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return common, nil
}

// readHead reads the HEAD of the git directory gitDir as git writes it: a
// symbolic ref ("ref: refs/heads/main") or a commit hash (detached).
func readHead(gitDir string) (*plumbing.Reference, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, plumbing.HEAD.String()))
	if err != nil {
		return nil, err
	}
	return plumbing.NewReferenceFromStrings(plumbing.HEAD.String(), strings.TrimSpace(string(b))), nil
}

// readGitFile returns the git directory named by the .git file in top.
func readGitFile(top string) (string, error) {
	b, err := os.ReadFile(filepath.Join(top, gitDirName))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gitDir, found := strings.CutPrefix(line, "gitdir: ")
	if !found {
		return "", fmt.Errorf("%s has no gitdir: line", filepath.Join(top, gitDirName))
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	return gitDir, nil
}

// headBranch returns the short name of the branch head points to, or ""
// when HEAD is detached. HEAD is not resolved, so an unborn branch (no
// commits yet) is still reported.
func headBranch(head *plumbing.Reference) string {
	if head.Type() != plumbing.SymbolicReference || !head.Target().IsBranch() {
		return ""
	}
	return head.Target().Short()
}

// oneLine flattens err's message so it fits on a single line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
