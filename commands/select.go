package commands

import (
	"errors"
	"fmt"

	"github.com/kandev/kandev/state"
)

// SessionRef is how a command names one session: an id or unique prefix, or
// --latest (optionally within --workspace).
type SessionRef struct {
	ID        string `arg:"" optional:"" help:"Session id or unique id prefix."`
	Latest    bool   `help:"The most recently active session the command can act on."`
	Workspace string `help:"With --latest: only sessions of this workspace." placeholder:"W"`
}

// resolve returns the session id; eligible filters --latest candidates.
func (r SessionRef) resolve(env *Env, eligible func(*state.Session) bool) (string, error) {
	h, err := env.Home()
	if err != nil {
		return "", err
	}
	switch {
	case r.ID != "" && r.Latest:
		return "", usagef("give a session id or --latest, not both")
	case r.ID != "":
		id, err := h.ResolveID(r.ID)
		if err != nil {
			return "", err
		}
		return id, refuseNewer(h, id)
	case !r.Latest:
		return "", usagef("name a session: an id, an id prefix, or --latest (kandev list shows them)")
	}
	undo := readingEverySession()
	all, err := h.ListSessions()
	undo()
	if err != nil {
		return "", err
	}
	for _, s := range all {
		if r.Workspace != "" && s.Workspace != r.Workspace {
			continue
		}
		if eligible == nil || eligible(s) {
			return s.ID, nil
		}
	}
	where := ""
	if r.Workspace != "" {
		where = fmt.Sprintf(" in workspace %q", r.Workspace)
	}
	return "", usagef("--latest: no session%s that this command can act on (kandev list shows them)", where)
}

// sessionID opens the home and resolves ref (an id or unique prefix).
func (e *Env) sessionID(ref string) (*state.Home, string, error) {
	h, err := e.Home()
	if err != nil {
		return nil, "", err
	}
	id, err := h.ResolveID(ref)
	return h, id, err
}

// load resolves the reference and reads the session's record.
func (r SessionRef) load(env *Env, eligible func(*state.Session) bool) (*state.Home, *state.Session, error) {
	id, err := r.resolve(env, eligible)
	if err != nil {
		return nil, nil, err
	}
	h, _ := env.Home()
	s, err := h.LoadSession(id)
	return h, s, err
}

// refuseNewer refuses a session whose record a newer kandev wrote, so that
// commands that read only its log (events, transcript) never half-read it.
func refuseNewer(h *state.Home, id string) error {
	if _, err := h.LoadSession(id); errors.Is(err, state.ErrNewerFormat) {
		return err
	}
	return nil
}
