package remote

import (
	"errors"
	"os"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// Result is what a push or pull of one session did.
type Result struct {
	ID     string `json:"id"`
	Remote string `json:"remote"`
	// Action: "pushed", "pulled", "up to date", "ahead" (pull: this machine
	// has more; push it), "behind" (push: the remote has more; pull it),
	// "would pull" / "would push" (--dry-run), "new" (--dry-run: only on
	// the remote).
	Action string `json:"action"`
	Commit string `json:"commit,omitempty"`
	// Events is how many log lines the push sent or the pull added.
	Events int64  `json:"events"`
	Claim  *Claim `json:"claim,omitempty"`
	// Worktree is where a pulled session's worktree maps ("" not mapped).
	Worktree string `json:"worktree,omitempty"`
	// RemoteOnly: the session exists only on the remote (before this pull).
	RemoteOnly bool `json:"remote_only,omitempty"`
	// Session is the remote's record of a remote-only session (--dry-run).
	Session *RemoteSession `json:"session,omitempty"`
	// TrustPending: the pulled session's MCP servers (Servers) wait for
	// kandev trust before anything of them runs here.
	TrustPending bool     `json:"trust_pending,omitempty"`
	Servers      []string `json:"mcp_servers,omitempty"`
	// PulledCwd: the pulled session's working directory, chosen by the
	// remote, lies outside any clone it maps to here; it is paused.
	PulledCwd string `json:"pulled_cwd,omitempty"`
}

// RemoteSession is what list shows of a session that exists only on a remote.
type RemoteSession struct {
	ID             string    `json:"id"`
	Title          string    `json:"title"`
	Agent          string    `json:"agent"`
	Workspace      string    `json:"workspace"`
	State          string    `json:"state"`
	LastActivityAt time.Time `json:"last_activity_at"`
	Remote         string    `json:"remote"`
}

// Env is what the operations need from the command: the home, the config
// and the options.
type Env struct {
	Home   *state.Home
	Config *config.Config
	Opt    Options
}

func (e Env) fill() (Env, *store, error) {
	if e.Opt.Machine == "" {
		m, err := MachineID(e.Home)
		if err != nil {
			return e, nil, err
		}
		e.Opt.Machine = m
	}
	if e.Opt.TTL <= 0 {
		ttl := state.DefaultTTLSeconds
		if e.Config != nil {
			ttl = e.Config.ClaimTTLSeconds()
		}
		e.Opt.TTL = time.Duration(ttl) * time.Second
	}
	if e.Opt.Timeout <= 0 {
		e.Opt.Timeout = config.DefaultSyncTimeoutSeconds * time.Second
		if e.Config != nil {
			e.Opt.Timeout = e.Config.SyncTimeout()
		}
	}
	if e.Opt.MaxPullBytes <= 0 {
		e.Opt.MaxPullBytes = config.DefaultMaxPullBytes
		if e.Config != nil {
			e.Opt.MaxPullBytes = e.Config.MaxPullBytes()
		}
	}
	if e.Opt.Dir == "" {
		e.Opt.Dir, _ = os.Getwd()
	}
	s, err := openStore(e.Home)
	return e, s, err
}

// retryStale repeats an operation a concurrent update made stale; it reads
// the remote again each time.
func retryStale(fn func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = fn(); !errors.Is(err, errStale) {
			return err
		}
		time.Sleep(time.Duration(5+i*20) * time.Millisecond)
	}
	return err
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}
