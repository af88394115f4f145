package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// ProbeWithin is Probe bounded by timeout: an agent that does not answer in
// time is a probeTimeoutError that says so, never an empty set of capabilities.
func ProbeWithin(ctx context.Context, p Profile, home string, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	caps, err := Probe(ctx, p, home)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, &probeTimeoutError{Agent: p.Name, Timeout: timeout}
	}
	return caps, err
}

// probeTimeoutError is a probed agent that did not answer initialize in time.
type probeTimeoutError struct {
	Agent   string
	Timeout time.Duration
}

func (e *probeTimeoutError) Error() string {
	return fmt.Sprintf("agent %s did not answer initialize within %s (timed out: it may be hung, or the machine too busy)", e.Agent, e.Timeout)
}

// Probe launches the agent of p, performs the handshake and returns its
// initialize response (agent info and advertised capabilities).
func Probe(ctx context.Context, p Profile, home string) (json.RawMessage, error) {
	dir, _ := os.Getwd()
	proc, err := Launch(LaunchSpec{Command: p.ResolvedCommand(), Env: p.Env, Dir: dir, Home: home, Hint: p.InstallHint})
	if err != nil {
		return nil, err
	}
	defer proc.Stop(time.Second)
	conn := Connect(proc, ConnOptions{Cwd: dir})
	resp, err := conn.Initialize(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}

// DeleteSessions launches the agent of p in dir, and, when it advertises
// session/delete, asks it to delete each of tokens; it returns the tokens
// the agent deleted and the first error (a launch or handshake failure,
// or the agent's refusal of one of them). An agent that no longer
// advertises the method is left alone.
func DeleteSessions(ctx context.Context, p Profile, home, dir string, tokens []string) ([]string, error) {
	proc, err := Launch(LaunchSpec{Command: p.ResolvedCommand(), Env: p.Env, Dir: dir, Home: home, Hint: p.InstallHint})
	if err != nil {
		return nil, err
	}
	defer proc.Stop(time.Second)
	conn := Connect(proc, ConnOptions{Cwd: dir})
	if _, err := conn.Initialize(ctx); err != nil {
		return nil, err
	}
	if !conn.OffersDelete() {
		return nil, nil
	}
	var deleted []string
	var first error
	for _, t := range tokens {
		if err := conn.DeleteSession(ctx, t); err != nil {
			if first == nil {
				first = fmt.Errorf("session/delete %s: %w", t, err)
			}
			continue
		}
		deleted = append(deleted, t)
	}
	return deleted, first
}
