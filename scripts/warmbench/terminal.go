//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The terminal figures: kandev run in a pseudo-terminal as a person runs
// it, with the owner of the turn in three places (this command, a detached
// owner it starts, a warm owner an earlier command left):
//
//   - ask: the time from the owner's permission_requested line (its
//     timestamp: when the agent's request reached the owner) to the moment
//     "[y/N" appears on the terminal;
//   - Ctrl-C: the time from the ^C typed on the terminal to the command's
//     exit, with the turn ended "cancelled" in the log by then (the agent
//     answered the cancel).

// term is a kandev command running on a pseudo-terminal.
type term struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    []byte
	chunks []chunk // when each read ended, by offset
	done   chan struct{}
	exited time.Time
	code   int
}

type chunk struct {
	end int
	at  time.Time
}

// inTerminal starts kandev args on a new pseudo-terminal.
func (k kandev) inTerminal(args ...string) (*term, error) {
	m, s, err := openPTY()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(k.bin, append([]string{"--home", k.home}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = terminalAttr()
	if err := cmd.Start(); err != nil {
		m.Close()
		s.Close()
		return nil, err
	}
	s.Close()
	t := &term{cmd: cmd, master: m, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			if n > 0 {
				at := time.Now()
				t.mu.Lock()
				t.out = append(t.out, buf[:n]...)
				t.chunks = append(t.chunks, chunk{len(t.out), at})
				t.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		t.exited = time.Now()
		t.code = cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.code = 128 + int(ws.Signal())
			}
		}
		close(t.done)
	}()
	return t, nil
}

// waitFor returns when s was first shown on the terminal (the end of the
// read that completed it).
func (t *term) waitFor(s string, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		t.mu.Lock()
		if i := bytes.Index(t.out, []byte(s)); i >= 0 {
			end := i + len(s)
			for _, c := range t.chunks {
				if c.end >= end {
					t.mu.Unlock()
					return c.at, nil
				}
			}
		}
		screen := string(t.out)
		t.mu.Unlock()
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%q never appeared on the terminal:\n%s", s, screen)
		}
		time.Sleep(time.Millisecond)
	}
}

// wait waits for the command's exit and closes the terminal.
func (t *term) wait(within time.Duration) error {
	defer t.master.Close()
	select {
	case <-t.done:
		return nil
	case <-time.After(within):
		t.cmd.Process.Kill()
		<-t.done
		return fmt.Errorf("kandev %v did not exit within %s", t.cmd.Args[1:], within)
	}
}

// lastOf is the last line of type typ in session id's log.
func lastOf(home, id, typ string) (ts time.Time, stop string) {
	f, err := os.Open(filepath.Join(home, "sessions", id+".jsonl"))
	if err != nil {
		fail(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Type       string
			Timestamp  string
			StopReason string `json:"stop_reason"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == typ {
			ts, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
			stop = e.StopReason
		}
	}
	return ts, stop
}

// ownerGone waits until session id has no live owner.
func (k kandev) ownerGone(id string) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(k.home, "sessions", id+".json"))
		if err != nil {
			return
		}
		var rec struct {
			OwnerPID int `json:"owner_pid"`
		}
		if json.Unmarshal(b, &rec) != nil || rec.OwnerPID == 0 || syscall.Kill(rec.OwnerPID, 0) != nil {
			return
		}
	}
	fail(fmt.Errorf("the owner of %s did not exit", id))
}

// place is where the owner of the measured turn runs.
type place struct {
	name string
	// session returns a session ready for the next measured command and
	// that command's --linger.
	session func(k kandev) (id, linger string)
	// after runs after each measured command.
	after func(k kandev, id string)
}

var places = []place{
	{name: "in this command (--linger 0)", session: func(k kandev) (string, string) {
		return k.idle(), "0s"
	}},
	{name: "detached, started by it", session: func(k kandev) (string, string) {
		return k.idle(), "10m"
	}, after: func(k kandev, id string) {
		k.mustOut("close", id)
		k.ownerGone(id)
	}},
	{name: "warm, left by an earlier command", session: func(k kandev) (string, string) {
		id := k.idle()
		k.mustOut("prompt", id, "--linger", "10m", "/say warm")
		return id, "10m"
	}, after: func(k kandev, id string) {
		k.mustOut("close", id)
		k.ownerGone(id)
	}},
}

// idle is a new session of the fast demo agent waiting for input, no owner.
func (k kandev) idle() string {
	out := k.mustOut("start", "--agent", "fast", "--linger", "0")
	return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}

// terminalFigures measures ask and Ctrl-C in each place, runs times each.
func (k kandev) terminalFigures(runs int) {
	fmt.Printf("\nask, Ctrl-C and --steer on a terminal (pty), demo agent, %d runs each, median / max\n\n", runs)
	fmt.Printf("%-34s %24s %26s %28s %24s\n", "owner of the turn", "request -> [y/N] shown", "tool_call -> [y/N] shown", "Ctrl-C -> exit (cancelled)", "--steer -> its log line")
	for _, p := range places {
		var asks, calls, stops, steers []time.Duration
		for i := range runs {
			a, c := k.askOnce(p, i)
			asks, calls = append(asks, a), append(calls, c)
			stops = append(stops, k.cancelOnce(p))
			steers = append(steers, k.steerOnce(p))
		}
		fmt.Printf("%-34s %24s %26s %28s %24s\n", p.name, medMax(asks), medMax(calls), medMax(stops), medMax(steers))
	}
	fmt.Println("(request and tool_call: the owner's log line for the agent's permission request and for the tool call just before it;")
	fmt.Println(" --steer: from the start of `kandev prompt --steer --no-follow` in another process to the steered message's line)")
}

// askOnce runs one prompt under ask whose agent asks to write a file, and
// answers n.
func (k kandev) askOnce(p place, i int) (fromRequest, fromCall time.Duration) {
	id, linger := p.session(k)
	t, err := k.inTerminal("--permissions", "ask", "prompt", "--linger", linger, id, fmt.Sprintf("/write asked-%d.txt no", i))
	if err != nil {
		fail(err)
	}
	shown, err := t.waitFor("[y/N", 30*time.Second)
	if err != nil {
		fail(err)
	}
	t.master.Write([]byte("n\r"))
	if err := t.wait(30 * time.Second); err != nil {
		fail(err)
	}
	req, _ := lastOf(k.home, id, "permission_requested")
	call, _ := lastOf(k.home, id, "tool_call")
	if p.after != nil {
		p.after(k, id)
	}
	if req.IsZero() || call.IsZero() {
		fail(fmt.Errorf("no tool_call and permission_requested in session %s", id))
	}
	// The agent sends the request right after the tool call: the owner's
	// tool_call line is the earliest sign of it there.
	return shown.Sub(req), shown.Sub(call)
}

// cancelOnce runs a sleeping turn and types Ctrl-C once it streams.
func (k kandev) cancelOnce(p place) time.Duration {
	id, linger := p.session(k)
	t, err := k.inTerminal("prompt", "--linger", linger, id, "/say working\n/sleep 5000\n/say after")
	if err != nil {
		fail(err)
	}
	if _, err := t.waitFor("working", 30*time.Second); err != nil {
		fail(err)
	}
	time.Sleep(100 * time.Millisecond)
	typed := time.Now()
	t.master.Write([]byte{3})
	if err := t.wait(30 * time.Second); err != nil {
		fail(err)
	}
	took := t.exited.Sub(typed)
	ended, stop := lastOf(k.home, id, "turn_ended")
	if t.code != 130 || stop != "cancelled" || ended.After(t.exited) {
		fail(fmt.Errorf("Ctrl-C (%s): exit %d, turn ended %q at %s, command exited at %s", p.name, t.code, stop, ended.Format(time.StampMicro), t.exited.Format(time.StampMicro)))
	}
	if p.after != nil {
		p.after(k, id)
	}
	return took
}

func medMax(ds []time.Duration) string {
	return fmt.Sprintf("%s / %s", median(ds).Round(100*time.Microsecond), slices.Max(ds).Round(100*time.Microsecond))
}
