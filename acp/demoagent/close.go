package demoagent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// Ending sessions: session/close cancels the session's running turn before
// it releases the session, session/delete forgets a session (one it does
// not have is already forgotten: that succeeds), and logout is not offered.

const deletedLog = "deleted-sessions.log"

// runningTurn is the cancel of a session's running turn, if any.
type runningTurn struct {
	mu     sync.Mutex
	cancel context.CancelFunc
}

// start notes the running turn's cancel; the returned func forgets it.
func (r *runningTurn) start(cancel context.CancelFunc) func() {
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
	}
}

// stop cancels the running turn, if any.
func (r *runningTurn) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

// CloseSession implements acp.Agent: the running turn is cancelled (it
// answers stopReason "cancelled"), then the session is released.
func (a *agent) CloseSession(_ context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	if a.opts.NoClose {
		return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
	}
	id := string(p.SessionId)
	if s := a.lookup(id); s != nil {
		s.running.stop()
	}
	err := a.changeSetup(id, func(f *sessionFile) error { f.Closed++; return nil })
	if err != nil {
		return acp.CloseSessionResponse{}, err
	}
	a.mu.Lock()
	delete(a.sessions, id) // load or resume opens it again
	a.mu.Unlock()
	return acp.CloseSessionResponse{}, nil
}

// UnstableDeleteSession implements session/delete.
func (a *agent) UnstableDeleteSession(_ context.Context, p acp.UnstableDeleteSessionRequest) (acp.UnstableDeleteSessionResponse, error) {
	if a.opts.NoDelete {
		return acp.UnstableDeleteSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionDelete)
	}
	if err := a.deleteSession(string(p.SessionId)); err != nil {
		return acp.UnstableDeleteSessionResponse{}, internalError(err)
	}
	return acp.UnstableDeleteSessionResponse{}, nil
}

// deleteSession removes session sid's file and forgets it; a session with
// no file is already deleted.
func (a *agent) deleteSession(sid string) error {
	if s := a.lookup(sid); s != nil {
		s.running.stop()
	}
	a.mu.Lock()
	delete(a.sessions, sid)
	a.mu.Unlock()
	if !validID().MatchString(sid) {
		return nil // no file can have that name: nothing to delete
	}
	err := os.Remove(filepath.Join(a.opts.Dir, sid+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(a.opts.Dir, deletedLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	defer f.Close()
	_, _ = f.WriteString(sid + "\n")
	return nil
}

// Logout implements acp.Agent: the demo agent has no account.
func (a *agent) Logout(context.Context, acp.LogoutRequest) (acp.LogoutResponse, error) {
	return acp.LogoutResponse{}, acp.NewMethodNotFound(acp.AgentMethodLogout)
}
