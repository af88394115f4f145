package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A session's own worktree is made and removed with the git command:
// go-git (v5) reads linked worktrees but cannot add or remove one (it has
// no `git worktree add`: the admin files under .git/worktrees, the locking
// and the checkout of a new branch are git's own), so doing it by hand
// would be a second, partial git. go-git still records and validates the
// result (DetectWorktree, CheckWorktree).

// ErrNoGit marks a worktree request outside a git repository or on a
// machine without git.
var ErrNoGit = errors.New("git worktree unavailable")

// SessionWorktreePath is where the worktree of session id goes: next to the
// repository whose top level is top, named after both.
func SessionWorktreePath(top, id string) string {
	short := id
	if i := strings.LastIndexByte(id, '-'); i >= 0 {
		short = id[i+1:]
	}
	return filepath.Join(filepath.Dir(top), filepath.Base(top)+"-kandev-"+short)
}

// DefaultWorktreeBranch is the branch of session id's worktree when none is named.
func DefaultWorktreeBranch(id string) string { return "kandev/" + id }

// AddWorktree creates a linked worktree at path on a new branch made from
// the HEAD of the work tree that holds dir, and returns it as recorded
// (Owned: kandev made it, so prune may remove it). The directory of dir
// relative to its top level is returned too, so the session can work in
// the same place of its own copy.
func AddWorktree(dir, branch, path string) (Worktree, string, error) {
	cur, ok, err := DetectWorktree(dir)
	if err != nil {
		return Worktree{}, "", err
	}
	if !ok {
		return Worktree{}, "", fmt.Errorf("%w: %s is not inside a git repository; run kandev from a repository or drop --worktree", ErrNoGit, dir)
	}
	rel, err := filepath.Rel(cur.Path, resolved(dir))
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	if _, err := os.Stat(path); err == nil {
		return Worktree{}, "", fmt.Errorf("worktree path %s already exists; remove it or name another branch", path)
	}
	if out, err := gitCommand(cur.Path, "worktree", "add", "-b", branch, path); err != nil {
		return Worktree{}, "", fmt.Errorf("git worktree add -b %s %s: %s", branch, path, out)
	}
	wt, ok, err := DetectWorktree(path)
	if err != nil || !ok {
		return Worktree{}, "", fmt.Errorf("git made worktree %s but it does not read as one: %v", path, err)
	}
	wt.Valid, wt.Owned = true, true
	return wt, rel, nil
}

// WorktreeChanges lists every file of the work tree at path that only this
// work tree holds: modified, staged and untracked files, and ignored ones
// too (an .env, a build output), since removing the work tree deletes them.
// Each is a line of git status --porcelain --ignored ("?? notes.txt",
// "!! .env", "!! build/"); none when the work tree is clean.
func WorktreeChanges(path string) ([]string, error) {
	out, err := gitOutput(path, "status", "--porcelain", "--ignored")
	if err != nil {
		return nil, fmt.Errorf("git status in %s: %s", path, strings.TrimSpace(out))
	}
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\n' }), nil
}

// RemoveWorktree removes the linked worktree at path; its branch stays,
// with every commit made on it. git refuses a worktree with changes, but
// not one with ignored files: check WorktreeChanges first.
func RemoveWorktree(path string) error {
	if out, err := gitCommand(path, "worktree", "remove", path); err != nil {
		return fmt.Errorf("git worktree remove %s: %s", path, out)
	}
	return nil
}

// gitCommand runs the git command in dir and returns its combined output,
// trimmed for a message.
func gitCommand(dir string, args ...string) (string, error) {
	out, err := gitOutput(dir, args...)
	return strings.TrimSpace(out), err
}

// gitOutput runs the git command in dir and returns its combined output as
// written (porcelain lines start with a space that matters).
func gitOutput(dir string, args ...string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "git was not found on PATH; install git", fmt.Errorf("%w: git not found", ErrNoGit)
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// resolved is dir with symlinks resolved (as DetectWorktree reports paths).
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}
