package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/gofrs/flock"

	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/state"
)

// store is this machine's side of the sync: a private bare object store
// (objects only; kandev keeps what it knows of the remote refs in the
// per-session sync files) and one sync file and lock per session.
type store struct {
	home *state.Home
	dir  string // $KANDEV_HOME/sync
	objs *filesystem.Storage
	// objMu serialises object reads of concurrent pulls (go-git's storage
	// is not safe for concurrent use).
	objMu sync.Mutex

	clonesMu sync.Mutex
	clones   map[string]*Clone // cloneAt by directory (nil: not in a clone)

	knownOnce sync.Once
	known     []Clone
}

// knownClones are the clones the sessions of this home work in, looked up
// once per store (only when a pulled session's clone is not the current one).
func (s *store) knownClones() []Clone {
	s.knownOnce.Do(func() {
		all, err := s.home.ListSessions()
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, rec := range all {
			if rec.Worktree == nil || rec.Worktree.Path == "" || seen[rec.Worktree.Path] {
				continue
			}
			seen[rec.Worktree.Path] = true
			if c, ok := s.cloneAt(rec.Worktree.Path); ok {
				s.known = append(s.known, c)
			}
		}
	})
	return s.known
}

// cloneAt is the clone enclosing dir, looked up once per store.
func (s *store) cloneAt(dir string) (Clone, bool) {
	s.clonesMu.Lock()
	defer s.clonesMu.Unlock()
	if c, ok := s.clones[dir]; ok {
		if c == nil {
			return Clone{}, false
		}
		return *c, true
	}
	if s.clones == nil {
		s.clones = map[string]*Clone{}
	}
	c, ok := cloneAt(dir)
	if !ok {
		s.clones[dir] = nil
		return Clone{}, false
	}
	s.clones[dir] = &c
	return c, true
}

func (s *store) gitDir() string { return filepath.Join(s.dir, "objects.git") }

func (s *store) syncPath(id string) string {
	return filepath.Join(s.dir, "sessions", id+".json")
}

// openStore opens (creating once) the store of home. Every directory is
// made 0700 before go-git writes into it, and go-git's files are created
// 0600 (privateFS), as everything under the home is.
func openStore(h *state.Home) (*store, error) {
	dir := filepath.Join(h.Dir, "sync")
	s := &store{home: h, dir: dir}
	gd := s.gitDir()
	if err := safefile.RefuseLinkedDirs(dir, gd, filepath.Join(dir, "sessions")); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(gd, "HEAD")); err != nil {
		if err := initGitDir(gd); err != nil {
			return nil, fmt.Errorf("create the sync store %s: %w", gd, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		return nil, err
	}
	s.objs = filesystem.NewStorageWithOptions(privateFS{osfs.New(gd)}, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, MaxOpenDescriptors: 64})
	return s, nil
}

// initGitDir lays out a bare repository that git itself accepts too (the
// ssh and https paths run git on it); core.sharedRepository=0600 keeps
// git's own writes private.
func initGitDir(gd string) error {
	dirs := []string{"objects/pack", "objects/info", "refs/heads", "refs/tags"}
	for i := 0; i < 256; i++ {
		dirs = append(dirs, fmt.Sprintf("objects/%02x", i))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(gd, d), 0o700); err != nil {
			return err
		}
	}
	files := map[string]string{
		"config": "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tsharedRepository = 0600\n[gc]\n\tauto = 0\n",
		"HEAD":   "ref: refs/heads/main\n",
	}
	for name, body := range files {
		if err := safefile.WriteFileAtomic(filepath.Join(gd, name), []byte(body)); err != nil {
			return err
		}
	}
	return nil
}

// privateFS creates what go-git writes owner-only.
type privateFS struct{ billy.Filesystem }

func (f privateFS) Create(name string) (billy.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
}

func (f privateFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&os.O_CREATE != 0 {
		_ = f.Filesystem.MkdirAll(filepath.Dir(name), 0o700)
	}
	return f.Filesystem.OpenFile(name, flag, perm&0o600)
}

func (f privateFS) MkdirAll(name string, perm os.FileMode) error {
	return f.Filesystem.MkdirAll(name, 0o700)
}

func (f privateFS) Chroot(p string) (billy.Filesystem, error) {
	c, err := f.Filesystem.Chroot(p)
	return privateFS{c}, err
}

// Synced is what this machine knows of one session's copy on a remote: the
// last commit both sides agreed on, and the claim this machine holds.
type Synced struct {
	URL string `json:"url"`
	// Commit is the session commit last pushed or pulled; LogBytes and
	// LogLines are the log it holds.
	Commit   string `json:"commit"`
	LogBytes int64  `json:"log_bytes"`
	LogLines int64  `json:"log_lines"`
	// ClaimHash is the owners ref value this machine last wrote or saw
	// ("" none); Claim is that claim when this machine holds it.
	ClaimHash string `json:"claim_hash,omitempty"`
	Claim     *Claim `json:"claim,omitempty"`
	// RemoteClaim is the newest claim seen on the remote (for status).
	RemoteClaim *Claim    `json:"remote_claim,omitempty"`
	SyncedAt    time.Time `json:"synced_at"`
	// SeenClaim is the remote's owners ref value this machine first saw at
	// SeenClaimAt: a claim counts as expiring at most MaxClaimLife after
	// that (Claim.Bounded), whatever its expires_at says.
	SeenClaim   string    `json:"seen_claim,omitempty"`
	SeenClaimAt time.Time `json:"seen_claim_at,omitempty"`
}

// readSynced returns the session's sync file, nil when it never synced.
func (s *store) readSynced(id string) (*Synced, error) {
	return readSyncedFile(s.syncPath(id))
}

func readSyncedFile(path string) (*Synced, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sy Synced
	if err := json.Unmarshal(b, &sy); err != nil {
		return nil, fmt.Errorf("sync file %s: %w", path, err)
	}
	return &sy, nil
}

func (s *store) writeSynced(id string, sy *Synced) error {
	b, _ := json.MarshalIndent(sy, "", "  ")
	return safefile.WriteFileAtomic(s.syncPath(id), append(b, '\n'))
}

// lock serialises this machine's sync operations on one session (a push
// from the command line and the owner's claim renewal, say).
func (s *store) lock(ctx context.Context, id string) (func(), error) {
	fl := flock.New(filepath.Join(s.dir, "sessions", id+".lock"), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("sync lock of session %s: %w", id, errors.Join(err, ctx.Err()))
	}
	return func() { _ = fl.Unlock() }, nil
}

// SessionStatus is what status shows of a session's copy on a remote,
// read from this machine's sync file (no network); nil when never synced.
func SessionStatus(h *state.Home, id string) *Synced {
	sy, err := readSyncedFile(filepath.Join(h.Dir, "sync", "sessions", id+".json"))
	if err != nil {
		return nil
	}
	return sy
}

// MachineID is this machine's stable id: $KANDEV_MACHINE, else the id kept
// in $KANDEV_HOME/machine-id (made once from the host name and random bytes).
func MachineID(h *state.Home) (string, error) {
	if m := strings.TrimSpace(os.Getenv("KANDEV_MACHINE")); m != "" {
		return m, nil
	}
	path := filepath.Join(h.Dir, "machine-id")
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "machine"
	}
	id := host + "-" + state.NewID(time.Now())[16:]
	fl := flock.New(path+".lock", flock.SetPermissions(0o600))
	if err := fl.Lock(); err != nil {
		return "", err
	}
	defer fl.Unlock()
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil // another process made it meanwhile
	}
	if err := safefile.WriteFileAtomic(path, []byte(id+"\n")); err != nil {
		return "", err
	}
	return id, nil
}

// Line is the sync state for status: the remote, what was last agreed,
// and the claim as last seen.
func (sy *Synced) Line() string { return sy.lineAt(time.Now()) }

func (sy *Synced) lineAt(now time.Time) string {
	held := ""
	if sy.Claim.Live(now) {
		held = " (this machine)"
	}
	return fmt.Sprintf("%s: %d events synced at %s; claim: %s%s", sy.URL, sy.LogLines, sy.SyncedAt.Local().Format(time.RFC3339), describe(sy.RemoteClaim, now), held)
}
