package remote

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"

	"github.com/kandev/kandev/state"
)

// remoteName is the remote kandev uses by default: [sync] remote, else origin.
func remoteName(cfg *state.Config) string {
	if cfg != nil && cfg.Sync.Remote != "" {
		return cfg.Sync.Remote
	}
	return "origin"
}

// looksLikeURL: --remote names a URL or path rather than a remote of the repository.
func looksLikeURL(r string) bool {
	return strings.Contains(r, "/") || strings.Contains(r, ":") || strings.Contains(r, `\`)
}

// repoRemote is a repository's top level and the URL of its remote name.
func repoRemote(dir, name string) (top, url string, err error) {
	wt, ok, err := state.DetectWorktree(dir)
	if err != nil || !ok {
		return "", "", fmt.Errorf("%w: %s is not inside a git repository (give --remote URL, or run in a clone)", ErrNoRemote, dir)
	}
	repo, err := git.PlainOpenWithOptions(wt.Path, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err == nil {
		var rem *git.Remote
		if rem, err = repo.Remote(name); err == nil && len(rem.Config().URLs) > 0 {
			return wt.Path, absURL(wt.Path, rem.Config().URLs[0]), nil
		}
	}
	if errors.Is(err, git.ErrRemoteNotFound) {
		return "", "", fmt.Errorf("%w: the repository at %s has no remote %q (git remote add %s URL, or set [sync] remote)", ErrNoRemote, wt.Path, name, name)
	}
	// go-git refuses some repositories git works in (config extensions):
	// ask git itself.
	out, gerr := exec.Command("git", "-C", wt.Path, "remote", "get-url", name).Output()
	if gerr != nil {
		return "", "", fmt.Errorf("%w: the repository at %s has no usable remote %q", ErrNoRemote, wt.Path, name)
	}
	return wt.Path, absURL(wt.Path, strings.TrimSpace(string(out))), nil
}

// absURL makes a relative local path URL absolute against the repository.
func absURL(top, u string) string {
	if scheme(u) == "file" && !strings.HasPrefix(u, "file://") && !filepath.IsAbs(u) {
		return filepath.Join(top, u)
	}
	return u
}

// sessionRepoDir is where a session's repository is on this machine.
func sessionRepoDir(s *state.Session) string {
	if s.Worktree != nil && s.Worktree.Path != "" {
		return s.Worktree.Path
	}
	return s.Cwd
}

// resolveURL is where session s travels: --remote (a URL, or a remote of
// the session's repository), else the remote it last synced with, else
// the default remote of its repository.
func resolveURL(cfg *state.Config, s *state.Session, sy *Synced, dir, flag string) (string, error) {
	if flag != "" && looksLikeURL(flag) {
		return absURL(dir, flag), nil
	}
	name := flag
	if name == "" {
		name = remoteName(cfg)
	}
	// The repository's remote first: its URL may carry credentials that
	// kandev never stores (the sync file keeps the URL without them).
	if s != nil {
		if _, u, err := repoRemote(sessionRepoDir(s), name); err == nil && (flag != "" || sy == nil || sy.URL == "" || WithoutSecret(u) == sy.URL) {
			return u, nil
		}
	}
	if flag == "" && sy != nil && sy.URL != "" {
		return sy.URL, nil
	}
	_, u, err := repoRemote(dir, name)
	return u, err
}

// originOf is what a session's commit records of its repository.
func originOf(cfg *state.Config, s *state.Session, url string) Origin {
	o := Origin{URL: WithoutSecret(url)}
	if s.Worktree != nil && s.Worktree.Path != "" {
		o.Branch = s.Worktree.Branch
		if _, u, err := repoRemote(s.Worktree.Path, remoteName(cfg)); err == nil {
			o.URL = WithoutSecret(u)
		}
		if rel, err := filepath.Rel(s.Worktree.Path, s.Cwd); err == nil && !strings.HasPrefix(rel, "..") {
			o.Rel = filepath.ToSlash(rel)
		}
	}
	return o
}

// cloneAt describes the work tree enclosing dir, for MapWorktree.
func cloneAt(dir string) (Clone, bool) {
	wt, ok, err := state.DetectWorktree(dir)
	if err != nil || !ok {
		return Clone{}, false
	}
	c := Clone{Path: wt.Path, Branch: wt.Branch}
	if repo, err := git.PlainOpenWithOptions(wt.Path, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}); err == nil {
		if rems, err := repo.Remotes(); err == nil {
			for _, r := range rems {
				for _, u := range r.Config().URLs {
					c.URLs = append(c.URLs, absURL(wt.Path, u))
				}
			}
		}
	}
	return c, true
}
