package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	killed     bool          // kandev was alive when SIGKILL was sent
	cause      string        // "delay", "event", "cap" or "" (exited by itself)
	at         time.Duration // when the kill was sent, from the command's start
	pid        int
	exitedSelf bool
	exitCode   int // of kandev (through script -e in pty mode)
	err        string
}

// capAfter bounds a killed command whose trigger never comes.
const capAfter = 7 * time.Second

// killedRun runs kandev with args and SIGKILLs the kandev process (only it)
// at the plan's kill point. In pty mode it runs under `script` so kandev has
// a terminal (permission mode ask asks and waits).
func (x *runEnv) killedRun(args []string) killInfo {
	var ki killInfo
	var cmd *exec.Cmd
	pidFile := filepath.Join(x.dir, "kandev.pid")
	if x.p.scen.pty {
		sh := filepath.Join(x.dir, "killed.sh")
		body := "#!/bin/sh\necho $$ > " + shellQuote(pidFile) + "\nexec " + shellJoin(append([]string{x.o.kandev}, args...)) + "\n"
		if err := os.WriteFile(sh, []byte(body), 0o755); err != nil {
			ki.err = err.Error()
			return ki
		}
		cmd = exec.Command("script", "-qfec", "/bin/sh "+shellQuote(sh), "/dev/null")
	} else {
		cmd = exec.Command(x.o.kandev, args...)
	}
	cmd.Dir, cmd.Env = x.cwd, x.env
	var stdin interface{ Close() error }
	if x.p.scen.pty {
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
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		ki.err = err.Error()
		return ki
	}

	var mu sync.Mutex
	pid := 0
	exited := false
	pidReady := make(chan struct{})
	if x.p.scen.pty {
		go func() {
			defer close(pidReady)
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if b, err := os.ReadFile(pidFile); err == nil {
					if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && exeIs(n, x.o.kandev) {
						mu.Lock()
						pid = n
						mu.Unlock()
						return
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	} else {
		pid = cmd.Process.Pid
		close(pidReady)
	}
	var once sync.Once
	kill := func(cause string) {
		<-pidReady
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			ki.at, ki.cause, ki.pid = time.Since(t0), cause, pid
			if pid == 0 || exited || !aliveNotZombie(pid) || (x.p.scen.pty && !exeIs(pid, x.o.kandev)) {
				ki.cause = ""
				return
			}
			if x.p.scen.pty {
				ki.killed = syscall.Kill(pid, syscall.SIGKILL) == nil
			} else {
				ki.killed = cmd.Process.Signal(syscall.SIGKILL) == nil
			}
		})
	}
	var timers []*time.Timer
	if x.p.killEvent == "" {
		timers = append(timers, time.AfterFunc(x.p.killDelay, func() { kill("delay") }))
	}
	timers = append(timers, time.AfterFunc(capAfter, func() { kill("cap") }))

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
		ki.printed = append(ki.printed, append([]byte(nil), line...))
		if x.p.killEvent != "" && e.Type == x.p.killEvent {
			kill("event")
		}
	}
	// The output is closed: kandev is dead or done. Reap it (and script).
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-waited
	}
	mu.Lock()
	exited = true
	mu.Unlock()
	for _, t := range timers {
		t.Stop()
	}
	once.Do(func() {}) // no kill after this point
	if stdin != nil {
		stdin.Close()
	}
	ki.exitedSelf = !ki.killed
	if cmd.ProcessState != nil {
		ki.exitCode = cmd.ProcessState.ExitCode()
	}
	return ki
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
