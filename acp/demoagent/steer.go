package demoagent

import (
	"context"
	"encoding/json"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// Steering (the ACP steering extension, version 1, as Claude's and
// Codex's current adapters serve it): unless NoSteer, initialize
// advertises _meta.steering.supported and _session/steering adds its
// prompt to the session's running turn, which answers it once the line it
// is on is done (after a /sleep, say), as lines of its own user entry.
// With no turn running it answers outcome promptRequired and keeps
// nothing: the client sends it as a prompt.

const methodSteering = "_session/steering"

// steerBox holds the messages steered into a session's running turn.
type steerBox struct {
	mu      sync.Mutex
	running bool
	queued  []string
}

// begin marks a turn running: steers are taken from now on.
func (b *steerBox) begin() {
	b.mu.Lock()
	b.running, b.queued = true, nil
	b.mu.Unlock()
}

// take pops the next steered message; with none, the turn is over for
// steering (a later steer is handed back), atomically with the check.
func (b *steerBox) take() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queued) == 0 {
		b.running = false
		return "", false
	}
	next := b.queued[0]
	b.queued = b.queued[1:]
	return next, true
}

// end drops what a cancelled or failed turn did not get to.
func (b *steerBox) end() {
	b.mu.Lock()
	b.running, b.queued = false, nil
	b.mu.Unlock()
}

// add queues text for the running turn; it reports false when none runs.
func (b *steerBox) add(text string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running {
		return false
	}
	b.queued = append(b.queued, text)
	return true
}

// steerMeta is initialize's top-level _meta (nil with NoSteer).
func (a *agent) steerMeta() map[string]any {
	if a.opts.NoSteer {
		return nil
	}
	return map[string]any{"steering": map[string]any{"supported": true}}
}

// HandleExtensionMethod implements acp.ExtensionMethodHandler: it serves
// _session/steering.
func (a *agent) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method != methodSteering || a.opts.NoSteer {
		return nil, acp.NewMethodNotFound(method)
	}
	var p struct {
		SessionID string             `json:"sessionId"`
		Prompt    []acp.ContentBlock `json:"prompt"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || len(p.Prompt) == 0 {
		return nil, acp.NewInvalidParams(map[string]any{"error": "steer params require a sessionId and a non-empty prompt"})
	}
	s := a.lookup(p.SessionID)
	if s == nil {
		return nil, errNoSession(p.SessionID)
	}
	if !s.steer.add(promptText(p.Prompt)) {
		return map[string]string{"outcome": "promptRequired", "reason": "noRunningTurn"}, nil
	}
	return map[string]string{"outcome": "injected"}, nil
}

// runSteered answers the messages steered into the turn, each as a user
// entry of its own, until none is left.
func (t *turn) runSteered() error {
	for {
		next, ok := t.s.steer.take()
		if !ok {
			return nil
		}
		t.s.file.Entries = append(t.s.file.Entries, entry{Role: roleUser, Text: next})
		if err := save(t.a.opts.Dir, &t.s.file); err != nil {
			return err
		}
		if err := t.run(next); err != nil {
			return err
		}
	}
}
