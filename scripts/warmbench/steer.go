//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// steerOnce runs a sleeping turn whose owner is in place p and, once it
// streams, sends `kandev prompt --steer --no-follow` from another process:
// the figure is the time from that command's start to the steered
// message's line in the log (the owner took it from its inbox and passed
// it to the agent).
func (k kandev) steerOnce(p place) time.Duration {
	id, linger := p.session(k)
	t, err := k.inTerminal("prompt", "--linger", linger, id, "/say working\n/sleep 3000\n/say after")
	if err != nil {
		fail(err)
	}
	if _, err := t.waitFor("working", 30*time.Second); err != nil {
		fail(err)
	}
	time.Sleep(100 * time.Millisecond)
	sent := time.Now()
	k.mustOut("prompt", "--steer", "--no-follow", id, "/say steered")
	if err := t.wait(30 * time.Second); err != nil {
		fail(err)
	}
	at := steeredAt(k.home, id)
	if p.after != nil {
		p.after(k, id)
	}
	if at.IsZero() {
		fail(fmt.Errorf("steer (%s): no steered message in session %s", p.name, id))
	}
	return at.Sub(sent)
}

// steeredAt is the timestamp of the log's last user message steered into a
// running turn (zero when none).
func steeredAt(home, id string) time.Time {
	f, err := os.Open(filepath.Join(home, "sessions", id+".jsonl"))
	if err != nil {
		fail(err)
	}
	defer f.Close()
	var at time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct{ Type, Timestamp, Source string }
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "user_message" && e.Source == "steer" {
			at, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
		}
	}
	return at
}
