package remote

import (
	"bytes"
	"net/url"
	"path/filepath"
	"strings"
)

// Step is what a push or pull does, decided by Compare.
type Step int

const (
	// UpToDate: both sides hold the same log.
	UpToDate Step = iota
	// SendLocal: the remote holds a prefix of the local log (or nothing): push.
	SendLocal
	// TakeRemote: the local log is a prefix of the remote one (or missing): pull.
	TakeRemote
	// Diverged: both appended since they last agreed; refused, nothing lost.
	Diverged
)

func (s Step) String() string {
	return [...]string{"up to date", "push", "pull", "diverged"}[s]
}

// Sides are the facts Compare decides on: what each side appended since
// they last agreed (the last push or pull; nothing when they never did).
type Sides struct {
	LocalExists, RemoteExists bool
	// Descends: the remote commit has the last agreed commit among its
	// ancestors (true when they never agreed).
	Descends bool
	// LocalExtra and RemoteExtra are the log bytes each side holds past
	// the agreed point.
	LocalExtra, RemoteExtra []byte
}

// Compare decides between pushing, pulling and refusing. The log is
// append-only, so the only question is which side holds a prefix of the
// other. Comparing contents, not lengths, is what lets a push or pull cut
// off by a crash complete the next time: the side that already received
// part of it holds a prefix of the other.
func Compare(s Sides) Step {
	switch {
	case !s.RemoteExists && !s.LocalExists:
		return UpToDate
	case !s.RemoteExists:
		return SendLocal
	case !s.Descends:
		return Diverged // rewritten by hand, or another session under the same id
	case !s.LocalExists:
		return TakeRemote
	case bytes.Equal(s.LocalExtra, s.RemoteExtra):
		return UpToDate
	case bytes.HasPrefix(s.LocalExtra, s.RemoteExtra):
		return SendLocal
	case bytes.HasPrefix(s.RemoteExtra, s.LocalExtra):
		return TakeRemote
	}
	return Diverged
}

// viaGitCommand says which remotes kandev reaches by running git itself:
// ssh (go-git reads neither ~/.ssh/config's IdentityFile, ProxyJump and
// friends nor the user's ssh program) and http(s) (go-git does not run git's
// credential helpers). Local paths, file:// and git:// go through go-git.
func viaGitCommand(u string) bool {
	switch scheme(u) {
	case "ssh", "http", "https", "scp":
		return true
	}
	return false
}

// scheme is the transport a remote URL names: file for local paths, scp for
// user@host:path, else its URL scheme.
func scheme(u string) string {
	if i := strings.Index(u, "://"); i > 0 {
		return strings.ToLower(u[:i])
	}
	if filepath.IsAbs(u) || strings.HasPrefix(u, ".") || !strings.Contains(u, ":") {
		return "file"
	}
	if i := strings.Index(u, ":"); i == 1 && len(u) > 2 && (u[2] == '\\' || u[2] == '/') {
		return "file" // a Windows drive letter
	}
	return "scp"
}

// SameRepository reports whether two remote URLs name the same repository,
// as a user would judge: scheme-insensitive for the same host and path, a
// trailing ".git" or "/" not counting, local paths compared resolved.
func SameRepository(a, b string) bool {
	return normalizeURL(a) == normalizeURL(b)
}

func normalizeURL(u string) string {
	u = strings.TrimSpace(u)
	switch scheme(u) {
	case "file":
		p := strings.TrimPrefix(u, "file://")
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return "file:" + strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	case "scp":
		hostPath := u
		if at := strings.Index(hostPath, "@"); at >= 0 {
			hostPath = hostPath[at+1:]
		}
		host, path, _ := strings.Cut(hostPath, ":")
		return "net:" + strings.ToLower(host) + "/" + trimRepoPath(path)
	}
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return "net:" + strings.ToLower(p.Hostname()) + "/" + trimRepoPath(p.Path)
}

func trimRepoPath(p string) string {
	return strings.TrimSuffix(strings.Trim(p, "/"), ".git")
}

// Clone is a local work tree a pulled session may be mapped onto.
type Clone struct {
	Path   string   // top level of the work tree
	Branch string   // current branch
	URLs   []string // its remotes' URLs
}

// MapWorktree picks the local clone of the repository a session was
// recorded in (same remote URL, same branch) for a session pulled from
// another machine; ok is false when there is none, and the session then
// pauses as any session whose worktree is missing.
func MapWorktree(originURL, branch string, clones []Clone) (Clone, bool) {
	if originURL == "" {
		return Clone{}, false
	}
	for _, c := range clones {
		if branch != "" && c.Branch != branch {
			continue
		}
		for _, u := range c.URLs {
			if SameRepository(u, originURL) {
				return c, true
			}
		}
	}
	return Clone{}, false
}

// WithoutSecret is u without the password or token of its user part
// (https://user:TOKEN@host/...), which kandev never stores or prints.
func WithoutSecret(u string) string {
	if !strings.Contains(u, "://") {
		return u
	}
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, has := p.User.Password(); !has {
		return u
	}
	p.User = url.User(p.User.Username())
	return p.String()
}
