package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// staleOrLocked is the error for an update of session id's refs that the
// remote refused as stale every time it was tried: when the remote is a
// path and one of those refs has a lock file there, it says so (a git that
// was killed while it updated the ref leaves that file, and every update
// of the ref is refused until someone removes it); otherwise ifNone.
func (l *link) staleOrLocked(ifNone error) error {
	lock := l.remoteRefLock()
	if lock == "" {
		return ifNone
	}
	return fmt.Errorf("session %s cannot be updated on %s: the lock file %s exists there (a git process is updating the session's ref, or was killed while it did: if none runs there, remove that file)", l.id, l.shown, lock)
}

// remoteRefLock is a lock file of one of the session's refs in a path
// remote ("" none, or a remote that is not a path).
func (l *link) remoteRefLock() string {
	if scheme(l.url) != "file" {
		return ""
	}
	dir := strings.TrimPrefix(l.url, "file://")
	for _, gitDir := range []string{dir, filepath.Join(dir, ".git")} {
		for _, ref := range []plumbing.ReferenceName{ownerRef(l.id), sessionRef(l.id)} {
			p := filepath.Join(gitDir, filepath.FromSlash(ref.String())+".lock")
			if _, err := os.Lstat(p); err == nil {
				return p
			}
		}
	}
	return ""
}
