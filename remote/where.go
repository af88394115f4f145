package remote

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// remoteName is the remote kandev uses by default: [sync] remote, else origin.
func remoteName(cfg *config.Config) string {
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
	wt, ok, err := worktree.DetectWorktree(dir)
	if err != nil || !ok {
		return "", "", fmt.Errorf("%w: %s is not inside a git repository (give --remote URL, or run in a clone)", ErrNoRemote, dir)
	}
	cfg, err := repoConfig(wt.Path)
	if err == nil {
		rem, ok := cfg.Remotes[name]
		if ok && len(rem.URLs) > 0 {
			return wt.Path, absURL(wt.Path, rem.URLs[0]), nil
		}
		if !ok {
			err = errRemoteNotFound
		}
	}
	if errors.Is(err, errRemoteNotFound) {
		return "", "", fmt.Errorf("%w: the repository at %s has no remote %q (git remote add %s URL, or set [sync] remote)", ErrNoRemote, wt.Path, name, name)
	}
	// go-git refuses some repositories git works in (config extensions,
	// see repoConfig): ask git itself.
	out, gerr := exec.Command("git", "-C", wt.Path, "remote", "get-url", name).Output()
	if gerr != nil {
		return "", "", fmt.Errorf("%w: the repository at %s has no usable remote %q", ErrNoRemote, wt.Path, name)
	}
	return wt.Path, absURL(wt.Path, strings.TrimSpace(string(out))), nil
}

var errRemoteNotFound = errors.New("remote not found")

// repoConfig reads the repository config of the work tree at top (the
// common one for a linked worktree) with go-git's config package, as
// go-git's PlainOpen would, and like it refuses a repository format or an
// extension it may not read right: the caller then asks git. go-git's root
// package is not used: it links OpenPGP signing and every transport into
// every kandev command (see docs/testing.md, start-up).
func repoConfig(top string) (*gitconfig.Config, error) {
	dir, err := worktree.CommonGitDir(top)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "config"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, err := gitconfig.ReadConfig(f)
	if err != nil {
		return nil, err
	}
	switch v := cfg.Core.RepositoryFormatVersion; {
	case v != "" && v != "0" && v != "1":
		return nil, fmt.Errorf("repository format version %s", v)
	case len(cfg.Raw.Section("extensions").Options) > 0:
		return nil, errors.New("repository config extensions")
	}
	return cfg, nil
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
func resolveURL(cfg *config.Config, s *state.Session, sy *Synced, dir, flag string) (string, error) {
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
func originOf(cfg *config.Config, s *state.Session, url string) Origin {
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
	wt, ok, err := worktree.DetectWorktree(dir)
	if err != nil || !ok {
		return Clone{}, false
	}
	c := Clone{Path: wt.Path, Branch: wt.Branch}
	if cfg, err := repoConfig(wt.Path); err == nil {
		for _, r := range cfg.Remotes {
			for _, u := range r.URLs {
				c.URLs = append(c.URLs, absURL(wt.Path, u))
			}
		}
	}
	return c, true
}
