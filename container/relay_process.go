package container

// The relay as a process: the container's main process (serve) and the
// client the engine's exec runs (attach). relay.go is what it keeps.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/kandev/kandev/internal/rpcwire"
)

// RelayMain runs `kandev __relay serve DIR -- CMD...` (the container's main
// process) or `kandev __relay attach DIR` (a client, through the engine's
// exec) and exits; it returns when args are not the relay's.
func RelayMain(args []string) {
	if len(args) < 2 || args[0] != relayCommand {
		return
	}
	var err error
	code := 0
	switch {
	case args[1] == "serve" && len(args) >= 5 && args[3] == "--":
		code, err = serve(args[2], args[4:])
	case args[1] == "attach" && len(args) == 3:
		err = attach(args[2])
	default:
		err = fmt.Errorf("usage: kandev %s serve DIR -- CMD... | attach DIR", relayCommand)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kandev relay: "+err.Error())
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func serve(dir string, command []string) (int, error) {
	cmd := exec.Command(command[0], command[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 1, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 1, err
	}
	errf, err := os.OpenFile(filepath.Join(dir, "agent.err"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err == nil {
		cmd.Stderr = errf
	}
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	r := &relay{stdin: stdin, pid: cmd.Process.Pid, ids: map[int64]request{}, pending: map[string][]byte{}, nextID: 1}
	if errf != nil {
		r.errlog = errf
	}
	r.cond = sync.NewCond(&r.mu)
	// The engine's stop signals the container's main process: the agent gets it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = stdin.Close() // an agent that exits on EOF ends as it would under kandev's own stop
			_ = cmd.Process.Signal(s)
		}
	}()
	sock := filepath.Join(dir, "sock")
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		_ = cmd.Process.Kill()
		return 1, err
	}
	_ = os.Chmod(sock, 0o600)
	_ = writeState(dir, r.pid)
	go r.accept(ln)
	r.readAgent(stdout)
	werr := cmd.Wait()
	r.mu.Lock()
	r.exited = true
	r.cond.Broadcast()
	r.mu.Unlock()
	// A client still attached reads what the agent wrote last.
	r.drained(2 * time.Second)
	_ = ln.Close()
	if ee, ok := werr.(*exec.ExitError); ok {
		return ee.ExitCode(), nil
	}
	return 0, werr
}

// writeState leaves the agent's pid where the host can read it.
func writeState(dir string, pid int) error {
	b, _ := json.Marshal(map[string]any{"agent_pid": pid, "started_at": time.Now().UTC().Format(time.RFC3339Nano)})
	tmp := filepath.Join(dir, "relay.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "relay.json"))
}

// readAgent journals every line the agent writes, up to the line bound
// every reader of the stream has (rpcwire.MaxLine): a longer one is read
// through without being kept (refuseLong), so it costs no memory and is
// never journaled, let alone replayed.
func (r *relay) readAgent(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, long, err := rpcwire.ReadLine(br, r.lineLimit())
		switch {
		case long != nil:
			r.refuseLong(long)
		case len(line) > 0:
			r.journal(append(bytes.Clone(line), '\n'))
		}
		if err != nil {
			return
		}
	}
}

// journal keeps one line of the agent's, waiting while the journal is full.
func (r *relay) journal(line []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.size > maxUnacked && !r.exited {
		r.cond.Wait()
	}
	r.noteAgentLine(line)
	r.lines = append(r.lines, line)
	r.size += len(line)
	r.cond.Broadcast()
}

func (r *relay) lineLimit() int {
	if r.maxLine > 0 {
		return r.maxLine
	}
	return rpcwire.MaxLine
}

// refuseLong answers for a line of the agent's over the bound: the agent
// gets an error for a request of its own (it waits for an answer), a client
// gets one in place of an answer to its request, and a notification is
// dropped; each is said in one line in agent.err.
func (r *relay) refuseLong(l *rpcwire.Long) {
	msg := rpcwire.Refusal(l.Size, r.lineLimit())
	if r.errlog != nil {
		fmt.Fprintln(r.errlog, "kandev relay: the agent wrote "+msg)
	}
	id, ok := l.ID()
	switch {
	case !ok: // a notification: nobody waits for it
	case l.IsRequest():
		r.toAgent(rpcwire.ErrorAnswer(id, -32600, "Invalid Request: "+msg))
	default:
		r.journal(rpcwire.ErrorAnswer(id, -32603, "Internal error: the agent's answer was refused: "+msg))
	}
}

// toAgent writes one line to the agent's stdin; lines never interleave.
func (r *relay) toAgent(line []byte) {
	r.inMu.Lock()
	defer r.inMu.Unlock()
	_, _ = r.stdin.Write(line)
}

// drained waits until the client has acknowledged everything, at most d.
func (r *relay) drained(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		r.mu.Lock()
		done := r.conn == nil || r.acked >= r.base+len(r.lines)
		r.mu.Unlock()
		if done {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attach connects this process's stdio to the relay of dir (through the
// engine's exec), waiting a little for a relay that is starting.
func attach(dir string) error {
	sock := filepath.Join(dir, "sock")
	var c net.Conn
	var err error
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("unix", sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("the relay at %s does not answer: %w", sock, err)
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(c, os.Stdin)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(os.Stdout, c)
		done <- struct{}{}
	}()
	<-done
	return nil
}
