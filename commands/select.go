package commands

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/internal/parallel"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// SessionRef is how a command names one session: an id or unique prefix, or
// --latest, scoped to the current workspace unless --workspace or
// --all-workspaces says otherwise.
type SessionRef struct {
	ID            string `arg:"" optional:"" help:"Session id or unique id prefix."`
	Latest        bool   `help:"The most recently active session of the current workspace that the command can act on."`
	Workspace     string `help:"With --latest: look in the workspace named W instead of the current one." placeholder:"W"`
	AllWorkspaces bool   `name:"all-workspaces" help:"With --latest: look in every workspace."`
	Cwd           string `help:"With --latest: the directory whose workspace (its git top level, else itself) to look in (default: current)." placeholder:"D"`
}

// need is what a command needs of a session to act on it; --latest picks
// only among the sessions that have it.
type need int

const (
	needAny        need = iota // reads: status, events, transcript, recap, export, usage, wait, fork
	needOpen                   // not finished: prompt, stop, done, archive, repair, attach
	needIdle                   // not finished and no turn running: rewind, clear, compact
	needResumable              // what list --resumable lists: resume
	needLive                   // a live owner: close
	needTurn                   // a turn running in a live owner: cancel
	needPermission             // a parked permission request: approve, deny
	needLease                  // the caller's own live attach lease: detach
)

// what the need asks, for the message when no session has it.
func (n need) String() string {
	switch n {
	case needOpen:
		return "that is not finished"
	case needIdle:
		return "that is not finished and runs no turn"
	case needResumable:
		return "that resume can act on now (kandev list --resumable; a paused one takes a prompt)"
	case needLive:
		return "that a kandev process is running"
	case needTurn:
		return "with a turn running"
	case needPermission:
		return "waiting for a permission answer"
	case needLease:
		return "that you are attached to"
	}
	return ""
}

// probeLevel is how deep the assessment of a latestCandidate must go for n.
func (n need) probeLevel() (level int, assess bool) {
	switch n {
	case needAny, needOpen:
		return 0, false
	case needIdle:
		return probeBadge, true
	case needResumable:
		return probeResumable, true
	}
	return probeFull, true
}

// workspaceScope is where --latest looks.
type workspaceScope struct {
	All  bool   // --all-workspaces
	Name string // --workspace NAME: sessions recorded with that workspace name
	// Root is the current workspace: the git top level of --cwd, else the
	// directory itself (symlinks resolved).
	Root string
}

// contains reports whether s belongs to the scope. In the current
// workspace: started in Root or below it, or in a worktree kandev made for
// a session of Root (those live next to it, named <repo>-kandev-<id>).
func (w workspaceScope) contains(s *state.Session) bool {
	switch {
	case w.All:
		return true
	case w.Name != "":
		return s.Workspace == w.Name
	}
	if within(s.Cwd, w.Root) {
		return true
	}
	wt := s.Worktree
	return wt != nil && wt.Owned && filepath.Dir(wt.Path) == filepath.Dir(w.Root) &&
		strings.HasPrefix(filepath.Base(wt.Path), filepath.Base(w.Root)+"-kandev-")
}

// String names the scope in messages.
func (w workspaceScope) String() string {
	switch {
	case w.All:
		return "any workspace"
	case w.Name != "":
		return fmt.Sprintf("workspace %q", w.Name)
	}
	return fmt.Sprintf("workspace %s (%s)", filepath.Base(w.Root), w.Root)
}

func within(path, root string) bool {
	if path == "" || root == "" {
		return false
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// latestCandidate is a session as --latest weighs it.
type latestCandidate struct {
	S *state.Session
	A verdict.Assessment // filled for sessions in scope when the need asks for it
	// MyLease: the caller holds a live attach lease on it (needLease only).
	MyLease bool
}

// has reports whether c meets n.
func (c latestCandidate) has(n need) bool {
	terminal := state.IsTerminal(c.S.State)
	switch n {
	case needAny:
		return true
	case needOpen:
		return !terminal
	case needIdle:
		return !terminal && c.A.Badge != verdict.BadgeRunning && c.A.Badge != verdict.BadgeWaitingForPermission
	case needResumable:
		return c.A.Resumable
	case needLive:
		return c.A.Reason == verdict.ReasonAgentRunning
	case needTurn:
		return c.A.Reason == verdict.ReasonAgentRunning && (c.A.Badge == verdict.BadgeRunning || c.A.Badge == verdict.BadgeWaitingForPermission)
	case needPermission:
		return c.A.Badge == verdict.BadgeWaitingForPermission
	case needLease:
		return c.MyLease && !terminal
	}
	return false
}

// errNoneEligible: sessions are in scope but none has what the command needs.
var errNoneEligible = errors.New("no session the command can act on")

// selectLatest is the one --latest policy: among the sessions in scope
// that meet the need, the most recently active, in the order list shows
// them (newest activity first, the greater id first on a tie: ids are
// unique, so the choice is always one session and always the same one).
// No session in scope is not found (with how many other workspaces hold);
// sessions in scope of which none meets the need are a usage error.
func selectLatest(cands []latestCandidate, n need, scope workspaceScope) (*state.Session, error) {
	var in []*state.Session
	eligible := map[*state.Session]bool{}
	others := 0
	for i := range cands {
		if c := &cands[i]; scope.contains(c.S) {
			in = append(in, c.S)
			eligible[c.S] = c.has(n)
		} else {
			others++
		}
	}
	state.SortByActivity(in)
	for _, s := range in {
		if eligible[s] {
			return s, nil
		}
	}
	switch {
	case len(in) == 0 && others == 0:
		return nil, fmt.Errorf("%w: --latest: no sessions yet (start one with: kandev start \"...\")", state.ErrNotFound)
	case len(in) == 0:
		return nil, fmt.Errorf("%w: --latest: no session in %s; %d in other workspaces (kandev list shows them; --all-workspaces looks in every one)", state.ErrNotFound, scope, others)
	}
	return nil, &usageError{Msg: fmt.Sprintf("--latest: none of the %d session(s) in %s is one %s (kandev list shows them)", len(in), scope, n), Err: errNoneEligible}
}

// scope is where --latest looks, from the flags.
func (r SessionRef) scope() (workspaceScope, error) {
	switch {
	case r.AllWorkspaces && r.Workspace != "":
		return workspaceScope{}, usagef("give --workspace or --all-workspaces, not both")
	case r.AllWorkspaces:
		return workspaceScope{All: true}, nil
	case r.Workspace != "":
		return workspaceScope{Name: r.Workspace}, nil
	}
	dir, err := absDir(r.Cwd)
	if err != nil {
		return workspaceScope{}, err
	}
	if wt, ok, _ := worktree.DetectWorktree(dir); ok {
		dir = wt.Path
	}
	return workspaceScope{Root: dir}, nil
}

// pick resolves the reference to a session id: an id or prefix as given,
// or the --latest choice for n, announced on stderr in text mode.
func (r SessionRef) pick(env *Env, n need) (*state.Home, string, error) {
	return r.pickAs(env, n, "", false)
}

// pickAs is pick for a command run for holder (its --holder; "" the
// default), whose leases decide what it can act on, and, for resume, with
// its --no-continue (which lifts some pauses).
func (r SessionRef) pickAs(env *Env, n need, holder string, noContinue bool) (*state.Home, string, error) {
	h, id, _, err := r.pickRecord(env, n, holder, noContinue)
	return h, id, err
}

// pickRecord is pickAs that also returns the session's record as it was
// read to pick it (nil when it could not be read): a command that goes on
// with the record needs no second read.
func (r SessionRef) pickRecord(env *Env, n need, holder string, noContinue bool) (*state.Home, string, *state.Session, error) {
	h, err := env.Home()
	if err != nil {
		return nil, "", nil, err
	}
	switch {
	case r.ID != "" && r.Latest:
		return nil, "", nil, usagef("give a session id or --latest, not both")
	case r.ID != "":
		if r.AllWorkspaces || r.Cwd != "" {
			return nil, "", nil, usagef("--all-workspaces and --cwd only go with --latest")
		}
		id, err := h.ResolveID(r.ID)
		if err != nil {
			return nil, "", nil, err
		}
		s, err := h.LoadSession(id)
		if errors.Is(err, state.ErrNewerFormat) {
			return h, id, nil, err // commands that read only the log never half-read it
		}
		return h, id, s, nil
	case !r.Latest:
		return nil, "", nil, usagef("name a session: an id, an id prefix, or --latest (kandev list shows them)")
	}
	scope, err := r.scope()
	if err != nil {
		return nil, "", nil, err
	}
	undo := readingEverySession()
	all, err := h.ListSessions()
	undo()
	if err != nil {
		return nil, "", nil, err
	}
	cands := make([]latestCandidate, len(all))
	for i, s := range all {
		cands[i].S = s
	}
	if level, deep := n.probeLevel(); deep {
		p, err := newProbe(env, holder, noContinue)
		if err != nil {
			return nil, "", nil, err
		}
		parallel.ForEach(len(cands), func(i int) {
			c := &cands[i]
			if !scope.contains(c.S) || state.IsTerminal(c.S.State) {
				return
			}
			c.A = p.assess(c.S, level)
			if n == needLease {
				l, _ := h.ReadLease(c.S.ID)
				c.MyLease = l.Live(p.now) && l.AttachedTo == p.holder
			}
		})
	}
	s, err := selectLatest(cands, n, scope)
	if err != nil {
		return nil, "", nil, err
	}
	if !env.Out.JSON {
		fmt.Fprintf(env.Out.Err, "kandev: session %s %q in %s\n", s.ID, s.Title, printableLine(s.Workspace))
	}
	return h, s.ID, s, nil
}

// resolve is pick without the home.
func (r SessionRef) resolve(env *Env, n need) (string, error) {
	_, id, err := r.pick(env, n)
	return id, err
}

// load resolves the reference and reads the session's record.
func (r SessionRef) load(env *Env, n need) (*state.Home, *state.Session, error) {
	h, id, s, err := r.pickRecord(env, n, "", false)
	if err != nil || s != nil {
		return h, s, err
	}
	s, err = h.LoadSession(id) // to say why it cannot be read
	return h, s, err
}
