//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kandev/kandev/history"
)

// cmdResult is one finished kandev invocation.
type cmdResult struct {
	stdout, stderr string
	code           int
	dur            time.Duration
	timedOut       bool
}

func (c cmdResult) brief() string {
	if c.code == 0 && !c.timedOut {
		return "exit 0"
	}
	s := strings.TrimSpace(c.stderr)
	if s == "" {
		s = strings.TrimSpace(c.stdout)
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = history.Clip(s, 160)
	if c.timedOut {
		return "timed out: " + s
	}
	return "exit " + strconv.Itoa(c.code) + ": " + s
}

// kandev runs the binary in the run's cwd and home and waits for it.
func (x *runEnv) kandev(timeout time.Duration, args ...string) cmdResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.o.kandev, args...)
	cmd.Dir, cmd.Env = x.cwd, x.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := cmdResult{stdout: out.String(), stderr: errb.String(), dur: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut, r.code = true, -1
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// kandevStream runs kandev like kandev() and also reports when the first
// line containing mark appeared on stdout (0 if never).
func (x *runEnv) kandevStream(timeout time.Duration, mark string, args ...string) (cmdResult, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.o.kandev, args...)
	cmd.Dir, cmd.Env = x.cwd, x.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		return cmdResult{code: -1, stderr: err.Error()}, 0
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return cmdResult{code: -1, stderr: err.Error()}, 0
	}
	var seen time.Duration
	var sb strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if seen == 0 && bytes.Contains(sc.Bytes(), []byte(mark)) {
			seen = time.Since(t0)
		}
		sb.Write(sc.Bytes())
		sb.WriteByte('\n')
	}
	err = cmd.Wait()
	r := cmdResult{stdout: sb.String(), stderr: errb.String(), dur: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut, r.code = true, -1
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, err.Error()
	}
	return r, seen
}

// killInfo says how the killed command ended.
type killInfo struct {
	printed    [][]byte      // the event lines kandev printed (acknowledged), in order
	atSignal   int           // how many of them were printed when the signal was sent
	killed     bool          // kandev was alive when the (first) signal was sent
	second     bool          // a second SIGTERM was sent while kandev was stopping
	capped     bool          // kandev outlived the hard cap and was SIGKILLed
	cause      string        // "delay", "event", "cap" or "" (exited by itself)
	at         time.Duration // when the signal was sent, from the command's start
	stopDur    time.Duration // from the (first) signal to kandev's exit
	pid        int
	exitedSelf bool
	exitCode   int    // of kandev (through script -e in pty mode); 128+N when it died of signal N
	diedOf     string // the signal that ended kandev, "" when it exited
	err        string
}

// capAfter bounds a killed command whose trigger never comes; hardCap bounds
// one that does not end after its signal (SIGHUP lets the turn finish).
const (
	capAfter = 7 * time.Second
	hardCap  = 40 * time.Second
)

var signalNums = map[string]syscall.Signal{
	sigKill: syscall.SIGKILL, sigTerm: syscall.SIGTERM, sigTerm2: syscall.SIGTERM,
	sigHup: syscall.SIGHUP, sigInt: syscall.SIGINT,
}

// signalledCmd is a running kandev that gets one signal at its kill point.
type signalledCmd struct {
	cmd       *exec.Cmd
	pty       bool
	kandev    string
	mu        sync.Mutex
	pid       int
	exited    bool
	pidReady  chan struct{}
	once      sync.Once
	t0, sigAt time.Time
}

// send delivers sig to kandev (only it) if it is still alive.
func (s *signalledCmd) send(sig syscall.Signal) bool {
	if s.pid == 0 || s.exited || !aliveNotZombie(s.pid) || (s.pty && !exeIs(s.pid, s.kandev)) {
		return false
	}
	if s.pty {
		return syscall.Kill(s.pid, sig) == nil
	}
	return s.cmd.Process.Signal(sig) == nil
}

// killedRun runs kandev with args and sends the plan's signal to the kandev
// process (only it) at the plan's kill point; for SIGTERM twice, a second
// one follows while it stops. In pty mode it runs under `script` so kandev
// has a terminal (permission mode ask asks and waits).
func (x *runEnv) killedRun(args []string) killInfo {
	var ki killInfo
	s := &signalledCmd{pty: x.p.scen.pty, kandev: x.o.kandev, pidReady: make(chan struct{})}
	pidFile := filepath.Join(x.dir, "kandev.pid")
	if s.pty {
		sh := filepath.Join(x.dir, "killed.sh")
		body := "#!/bin/sh\necho $$ > " + shellQuote(pidFile) + "\nexec " + shellJoin(append([]string{x.o.kandev}, args...)) + "\n"
		if err := os.WriteFile(sh, []byte(body), 0o755); err != nil {
			ki.err = err.Error()
			return ki
		}
		s.cmd = exec.Command("script", "-qfec", "/bin/sh "+shellQuote(sh), "/dev/null")
	} else {
		s.cmd = exec.Command(x.o.kandev, args...)
	}
	cmd := s.cmd
	cmd.Dir, cmd.Env = x.cwd, x.env
	var stdin interface{ Close() error }
	if s.pty {
		// An open pipe that never delivers a byte: script forwards nothing, so
		// the permission question waits for an answer that never comes.
		w, err := cmd.StdinPipe()
		if err != nil {
			ki.err = err.Error()
			return ki
		}
		stdin = w
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		ki.err = err.Error()
		return ki
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	s.t0 = time.Now()
	if err := cmd.Start(); err != nil {
		ki.err = err.Error()
		return ki
	}
	if s.pty {
		go s.readPid(pidFile)
	} else {
		s.pid = cmd.Process.Pid
		close(s.pidReady)
	}
	timers := x.armKill(s, &ki)
	x.readPrinted(out, s, &ki)
	s.wait()
	for _, t := range timers {
		t.Stop()
	}
	s.once.Do(func() {}) // no signal after this point
	if stdin != nil {
		stdin.Close()
	}
	ki.exitedSelf = !ki.killed
	if ki.killed {
		ki.stopDur = time.Since(s.sigAt)
	}
	if cmd.ProcessState != nil {
		ki.exitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ki.exitCode, ki.diedOf = 128+int(ws.Signal()), unix2name(ws.Signal())
		}
	}
	return ki
}

// armKill starts the timers of the kill point, the second SIGTERM and the caps.
func (x *runEnv) armKill(s *signalledCmd, ki *killInfo) []*time.Timer {
	p := x.p
	sig := signalNums[p.signal]
	var timers []*time.Timer
	fire := func(cause string) {
		<-s.pidReady
		s.once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			ki.at, ki.cause, ki.pid, ki.atSignal = time.Since(s.t0), cause, s.pid, len(ki.printed)
			s.sigAt = time.Now()
			if ki.killed = x.sendTarget(s, sig); !ki.killed {
				ki.cause = ""
				return
			}
			if p.signal == sigTerm2 {
				time.AfterFunc(p.secondAt, func() {
					s.mu.Lock()
					defer s.mu.Unlock()
					ki.second = s.send(syscall.SIGTERM) || ki.second
				})
			}
		})
	}
	x.fire = fire
	if p.killEvent == "" {
		timers = append(timers, time.AfterFunc(p.killDelay, func() { fire("delay") }))
	}
	timers = append(timers, time.AfterFunc(capAfter, func() { fire("cap") }))
	timers = append(timers, time.AfterFunc(hardCap, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		ki.capped = s.send(syscall.SIGKILL)
	}))
	return timers
}

// sendTarget sends sig to the plan's target: the detached owner of the
// session for a detached trial, else the command itself.
func (x *runEnv) sendTarget(s *signalledCmd, sig syscall.Signal) bool {
	if x.p.kind == kindDetached {
		return x.ownerSignal(sig)
	}
	return s.send(sig)
}

// readPrinted collects the event lines kandev prints and fires the kill at
// the plan's event.
func (x *runEnv) readPrinted(out io.Reader, s *signalledCmd, ki *killInfo) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		// In a pty other output (the permission question) may share a line.
		if i := bytes.IndexByte(line, '{'); i > 0 {
			line = line[i:]
		}
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
		}
		if jsonUnmarshal(line, &e) != nil || e.Seq == 0 || e.Type == "" {
			continue
		}
		s.mu.Lock()
		ki.printed = append(ki.printed, append([]byte(nil), line...))
		s.mu.Unlock()
		if x.p.killEvent != "" && e.Type == x.p.killEvent {
			x.fire("event")
		}
	}
}

func (s *signalledCmd) readPid(pidFile string) {
	defer close(s.pidReady)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && exeIs(n, s.kandev) {
				s.mu.Lock()
				s.pid = n
				s.mu.Unlock()
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wait reaps kandev (and script) once its output is closed.
func (s *signalledCmd) wait() {
	waited := make(chan struct{})
	go func() { s.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(hardCap):
		s.cmd.Process.Kill()
		<-waited
	}
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
}

func unix2name(sig syscall.Signal) string {
	for name, n := range signalNums {
		if n == sig && name != sigTerm2 {
			return name
		}
	}
	return sig.String()
}

// exeIs reports whether pid runs the binary at path.
func exeIs(pid int, path string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && strings.TrimSuffix(exe, " (deleted)") == path
}

// aliveNotZombie reports whether pid exists and has not exited.
func aliveNotZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	st := b[i+2]
	return st != 'Z' && st != 'X'
}

// demoAgents lists live demo-agent processes whose cwd is dir (the run's
// cwd, unique per run).
func demoAgents(dir string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cl, []byte("demo-agent")) {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || cwd != dir {
			continue
		}
		if aliveNotZombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// waitNoAgents waits up to d for dir's demo agents to be gone; it returns
// those still alive.
func waitNoAgents(dir string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := demoAgents(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}
