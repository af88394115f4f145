package demoagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"os"

	acp "github.com/coder/acp-go-sdk"
)

// The session methods of the agent: load (with its replay), resume, fork
// and the list it does not serve.

// LoadSession implements acp.AgentLoader: it replays the conversation, then answers.
func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if a.opts.NoLoad {
		return acp.LoadSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionLoad)
	}
	s, err := a.open(string(p.SessionId), p.Cwd)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if !a.enter() {
		return acp.LoadSessionResponse{}, internalError(errors.New("shutting down"))
	}
	// Holding the turn lock keeps a concurrent prompt from changing the
	// conversation half-way through the replay.
	s.turn.Lock()
	s.mcp = p.McpServers
	modes, opts := a.setupState(&s.file)
	if a.opts.LateReplay {
		go func() {
			defer a.busy.Done()
			defer s.turn.Unlock()
			ctx, cancel := a.scope(context.Background())
			defer cancel()
			if sleep(ctx, lateReplayPause) == nil {
				if kids, err := a.replayAll(ctx, s); err == nil {
					_ = a.childStates(ctx, s.file.ID, kids)
				}
			}
		}()
		return acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
	}
	rctx, cancel := a.scope(ctx)
	kids, err := a.replayAll(rctx, s)
	cancel()
	if err != nil || len(kids) == 0 {
		s.turn.Unlock()
		a.busy.Done()
		if err != nil {
			return acp.LoadSessionResponse{}, err
		}
		return acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
	}
	// Each child's state now goes out after the answer (child_replay.go);
	// a prompt waits for it.
	go func() {
		defer a.busy.Done()
		defer s.turn.Unlock()
		ctx, cancel := a.scope(context.Background())
		defer cancel()
		if sleep(ctx, lateReplayPause) == nil {
			_ = a.childStates(ctx, s.file.ID, kids)
		}
	}()
	return acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

// replayAll sends the session's conversation again, entry by entry, and
// the end of each child it started; it returns those children. The
// caller holds s.turn.
func (a *agent) replayAll(ctx context.Context, s *session) ([]childState, error) {
	var kids []childState
	for _, e := range s.file.Entries {
		if e.Role == roleChild {
			kid, err := a.replayChild(ctx, s.file.ID, e)
			if err != nil {
				return nil, err
			}
			if kid != nil {
				kids = append(kids, *kid)
			}
			continue
		}
		if err := a.replay(ctx, s.file.ID, e); err != nil {
			return nil, err
		}
	}
	return kids, a.childStates(ctx, s.file.ID, kids)
}

// ResumeSession implements acp.Agent: it restores the session without replay.
func (a *agent) ResumeSession(_ context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	if a.opts.NoResume {
		return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
	}
	s, err := a.open(string(p.SessionId), p.Cwd)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	s.mcp = p.McpServers
	modes, opts := a.setupState(&s.file)
	return acp.ResumeSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

// open returns the session from memory, or else from its file.
func (a *agent) open(id, cwd string) (*session, error) {
	if a.opts.FailOnResume {
		return nil, errNoSession(id)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		return s, nil
	}
	f, err := load(a.opts.Dir, id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoSession(id)
	}
	if err != nil {
		return nil, internalError(err)
	}
	if cwd != "" {
		f.Cwd = cwd
	}
	s := &session{file: *f}
	a.sessions[id] = s
	return s, nil
}

func (a *agent) lookup(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// Cancel implements acp.Agent; the SDK has already cancelled the turn's
// context. A child session is cancelled here, and so are the background
// children of a cancelled session, as Claude Code's interrupt stops them.
func (a *agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	a.kids.cancel(string(p.SessionId))
	return nil
}

// ListSessions implements acp.Agent; not supported.
func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

// forks reports whether session/fork is advertised and served: a fork is
// only useful to a client that can restore it.
func (a *agent) forks() bool { return !a.opts.NoFork && (!a.opts.NoResume || !a.opts.NoLoad) }

// UnstableForkSession implements session/fork: a copy of the session's
// conversation under a new id.
func (a *agent) UnstableForkSession(_ context.Context, p acp.UnstableForkSessionRequest) (acp.UnstableForkSessionResponse, error) {
	if !a.forks() {
		return acp.UnstableForkSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionFork)
	}
	src, err := a.open(string(p.SessionId), "")
	if err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	src.turn.Lock()
	file := src.file
	file.Entries = append([]entry{}, src.file.Entries...)
	file.Options = maps.Clone(src.file.Options)
	src.turn.Unlock()
	var b [8]byte
	_, _ = rand.Read(b[:])
	file.ID = "demo-" + hex.EncodeToString(b[:])
	if p.Cwd != "" {
		file.Cwd = p.Cwd
	}
	if err := save(a.opts.Dir, &file); err != nil {
		return acp.UnstableForkSessionResponse{}, internalError(err)
	}
	a.mu.Lock()
	a.sessions[file.ID] = &session{file: file}
	a.mu.Unlock()
	return acp.UnstableForkSessionResponse{SessionId: acp.SessionId(file.ID)}, nil
}

// advertise sends the commands the agent offers (available_commands_update).
func (a *agent) advertise(ctx context.Context, id string) error {
	cmds := []acp.AvailableCommand{}
	if !a.opts.NoCommands {
		cmds = append(cmds, acp.AvailableCommand{Name: "compact", Description: "Compact the conversation, keeping what I was asked to remember"})
	}
	return a.send(ctx, id, acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}
