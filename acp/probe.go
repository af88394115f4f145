package acp

import (
	"context"
	"encoding/json"
	"os"
	"time"
)

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
