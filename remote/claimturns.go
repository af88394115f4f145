package remote

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// ClaimTurns claims session id for the owner that is about to run it, if
// the session travels: it has synced (been pushed or pulled) or [sync]
// auto is on. A session the remote has more of is first brought up to date
// here. The caller holds the session's owner lock. onLost runs (once) if
// another machine takes the claim over while a turn runs. A nil *Turns
// and no error: the session does not travel (yet); nothing to claim.
func ClaimTurns(ctx context.Context, h *state.Home, cfg *config.Config, id string, onLost func()) (*Turns, error) {
	return claimTurns(ctx, h, cfg, id, onLost, false)
}

// ClaimWarm is ClaimTurns for a warm owner that holds no claim (its session
// did not travel when it started; it may since: a push while it lingered),
// before its next turn. Its agent already runs: when the claim brings
// another machine's turns, the error is ErrMovedOn with the claim held
// (the *Turns is returned: the owner releases it as it ends).
func ClaimWarm(ctx context.Context, h *state.Home, cfg *config.Config, id string, onLost func()) (*Turns, error) {
	return claimTurns(ctx, h, cfg, id, onLost, true)
}

func claimTurns(ctx context.Context, h *state.Home, cfg *config.Config, id string, onLost func(), warm bool) (*Turns, error) {
	// Read before the store is opened: a home that never syncs never gets one.
	sy, err := readSyncedFile(filepath.Join(h.Dir, "sync", "sessions", id+".json"))
	if err != nil {
		return nil, err
	}
	auto := cfg != nil && cfg.Sync.Auto
	if sy == nil && !auto {
		return nil, nil
	}
	e, s, err := Env{Home: h, Config: cfg}.fill()
	if err != nil {
		return nil, err
	}
	rec, err := h.LoadSession(id)
	if err != nil {
		return nil, err
	}
	url, err := resolveURL(cfg, rec, sy, sessionRepoDir(rec), "")
	if err != nil {
		if sy == nil {
			return nil, nil // auto, but nowhere to push: a session outside any clone
		}
		return nil, err
	}
	e.Opt.Dir = sessionRepoDir(rec)
	t := &Turns{l: newLink(s, id, url, sy, e.Opt), auto: auto, onLost: onLost, warm: warm}
	err = t.Busy(ctx)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, ErrMovedOn):
		return t, err
	case sy == nil && !errors.Is(err, ErrClaimHeld) && !errors.Is(err, ErrDiverged):
		// Never on the remote (auto, first turn, remote unreachable): no
		// other machine can be running it; it travels from a later turn.
		return nil, nil
	case errors.Is(err, ErrTimeout):
		return nil, &UnclaimedError{ID: id, Cause: err}
	}
	return nil, err
}

// UnclaimedError: the remote of a travelling session did not answer, so
// its claim could not be taken and no turn runs (unless --offline).
type UnclaimedError struct {
	ID    string
	Cause error // a *TimeoutError
}

func (e *UnclaimedError) Error() string {
	why := e.Cause.Error()
	var te *TimeoutError
	if errors.As(e.Cause, &te) {
		why = fmt.Sprintf("remote %s did not answer within %s", WithoutSecret(te.URL), te.After)
	}
	return fmt.Sprintf("session %s travels between machines and its claim cannot be taken: %s, so no turn runs here; try again once it answers, or add --offline to run the turn on this machine's copy", e.ID, why)
}

// Unwrap makes errors.Is(err, ErrTimeout) true.
func (e *UnclaimedError) Unwrap() error { return e.Cause }

// Holding reports whether this machine's sync file says it holds the claim
// on session id (no network): an owner gives it up once idle.
func Holding(h *state.Home, id string) bool {
	sy, err := readSyncedFile(SyncPath(h, id))
	return err == nil && sy != nil && sy.Claim != nil
}

// SyncPath is the file that says what this machine knows of session id's
// copy on its remote.
func SyncPath(h *state.Home, id string) string {
	return filepath.Join(h.Dir, "sync", "sessions", id+".json")
}

// Travels reports whether session id travels between machines: it has
// synced, or [sync] auto is on (no network).
func Travels(h *state.Home, cfg *config.Config, id string) bool {
	if cfg != nil && cfg.Sync.Auto {
		return true
	}
	sy, err := readSyncedFile(SyncPath(h, id))
	return err != nil || sy != nil
}

// Holding reports whether t holds the claim now (nil: no claim).
func (t *Turns) Holding() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holding && t.Fenced() == nil
}
