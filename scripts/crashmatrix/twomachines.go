//go:build unix

package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Two-machine trials: two homes ("A" and "B"), each with its own clone of
// one project, and one remote (a bare repository reached by path, or
// served by git daemon). A random schedule of prompts runs on both, with
// kills of either owner, a frozen remote (the daemon SIGSTOPped), each
// machine's own claim_ttl_seconds, warm owners (--linger) and cold ones.
// After the schedule both machines converge (push, pull, and the commands
// a divergence refusal prints) and the invariants are checked
// (twocheck.go): never two turns at one log position, no acknowledged turn
// lost on either machine or the remote, every divergence refused by name
// and recovered by the commands it printed.
const kindTwo = "two-machine"

// twoStep is one step of a schedule, on machine m (0: A, 1: B).
type twoStep struct {
	m   int
	act string // stepPrompt, stepKill, stepFreeze
	// kill: how long after the prompt started its command and owner are
	// SIGKILLed; linger: the prompt's --linger ("" none: cold).
	kill   time.Duration
	linger string
}

const (
	stepPrompt = "prompt"
	stepKill   = "kill"
	// stepFreeze: the remote is frozen during the step's prompt, which is
	// refused, then run again with --offline.
	stepFreeze = "freeze"
)

// twoPlan is what is random about a two-machine trial.
type twoPlan struct {
	daemon bool
	ttl    [2]int // each machine's claim_ttl_seconds
	steps  []twoStep
}

var machineNames = [2]string{"A", "B"}

func makeTwoPlan(r *rand.Rand) *twoPlan {
	tp := &twoPlan{daemon: r.IntN(2) == 0}
	// Short claims, so that a killed owner's is waited out within the
	// trial, and different on the two machines. Not 1 s: its holder renews
	// every third of a second, which a loaded CI machine does not keep up
	// with (seed 4343, runs 95 and 181 of the first 200).
	ttls := []int{2, 3, 5}
	tp.ttl = [2]int{ttls[r.IntN(len(ttls))], ttls[r.IntN(len(ttls))]}
	n := 2 + r.IntN(3)
	for i := 0; i < n; i++ {
		s := twoStep{m: r.IntN(2), act: stepPrompt}
		switch k := r.IntN(10); {
		case k < 2:
			s.act, s.kill = stepKill, time.Duration(50+r.IntN(900))*time.Millisecond
		case k < 3 && tp.daemon:
			s.act = stepFreeze
		}
		if r.IntN(3) == 0 {
			s.linger = "20s" // a warm owner stays behind
		}
		tp.steps = append(tp.steps, s)
	}
	return tp
}

// disrupted: the schedule kills an owner or freezes the remote.
func (tp *twoPlan) disrupted() bool {
	for _, s := range tp.steps {
		if s.act != stepPrompt {
			return true
		}
	}
	return false
}

func (tp *twoPlan) describe() string {
	remote := "path"
	if tp.daemon {
		remote = "git daemon"
	}
	var steps []string
	for _, s := range tp.steps {
		st := machineNames[s.m] + ":" + s.act
		if s.act == stepKill {
			st += fmt.Sprintf("@%dms", s.kill.Milliseconds())
		}
		if s.linger != "" {
			st += "(warm)"
		}
		steps = append(steps, st)
	}
	return fmt.Sprintf("%s, ttl A=%ds B=%ds, %s", remote, tp.ttl[0], tp.ttl[1], strings.Join(steps, " "))
}

// machine is one of a trial's two computers.
type machine struct {
	name, home, clone string
	env               []string
}

// twoTrial is a two-machine trial under way.
type twoTrial struct {
	*runEnv
	tp     *twoPlan
	bare   string
	url    string
	daemon *exec.Cmd
	ms     [2]*machine
	id     string
	// acked is every turn a prompt acknowledged (exit 0): its word and the
	// machine it ran on.
	acked map[string]int
	// refusals counts the divergences refused, and recovered.
	refusals int
}

func (x *runEnv) runTwo() {
	t := &twoTrial{runEnv: x, tp: x.p.two, acked: map[string]int{}}
	defer t.stopDaemon()
	if !t.setup() {
		return
	}
	for i, s := range t.tp.steps {
		t.step(i, s)
		if !t.r.pass() {
			return
		}
	}
	t.converge()
	t.check()
}

// git runs git in dir; false (and a failure) when it fails.
func (t *twoTrial) git(dir string, args ...string) bool {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.r.failf("setup: git %v: %v %s", args, err, out)
		return false
	}
	return true
}

func (t *twoTrial) setup() bool {
	served := filepath.Join(t.dir, "served")
	t.bare = filepath.Join(served, "project.git")
	seed := filepath.Join(t.dir, "seed")
	os.MkdirAll(seed, 0o755)
	if !t.git(t.dir, "init", "-q", "--bare", "-b", "main", t.bare) || !t.git(seed, "init", "-q", "-b", "main") {
		return false
	}
	os.WriteFile(filepath.Join(seed, "notes.txt"), []byte("notes\n"), 0o644)
	if !t.git(seed, "add", "notes.txt") || !t.git(seed, "commit", "-q", "-m", "init") || !t.git(seed, "push", "-q", t.bare, "main") {
		return false
	}
	t.url = t.bare
	if t.tp.daemon && !t.startDaemon(served) {
		return false
	}
	for i, name := range machineNames {
		m := &machine{name: name, home: filepath.Join(t.dir, "home"+name), clone: filepath.Join(t.dir, "clone"+name)}
		if !t.git(t.dir, "clone", "-q", "-b", "main", t.url, m.clone) {
			return false
		}
		os.MkdirAll(m.home, 0o700)
		cfg := t.p.configTOML(t.o.kandev) + fmt.Sprintf("\n[sync]\nclaim_ttl_seconds = %d\ntimeout_seconds = 2\n", t.tp.ttl[i])
		os.WriteFile(filepath.Join(m.home, "config.toml"), []byte(cfg), 0o600)
		for _, kv := range t.env {
			if !strings.HasPrefix(kv, "KANDEV_HOME=") {
				m.env = append(m.env, kv)
			}
		}
		m.env = append(m.env, "KANDEV_HOME="+m.home, "KANDEV_MACHINE="+name, "GIT_CONFIG_GLOBAL=/dev/null")
		t.ms[i] = m
	}
	c := t.on(0, "start", "/say a session that travels")
	t.id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	t.r.sessionID = t.id
	if c.code != 0 || t.id == "" {
		t.r.failf("setup: start on A: %s", c.brief())
		return false
	}
	return t.setupSync(0, "push") && t.setupSync(1, "pull")
}

// setupSync pushes or pulls the new session, again while the remote is
// too slow to answer (a loaded machine): the setup is not under test.
func (t *twoTrial) setupSync(m int, op string) bool {
	for try := 0; ; try++ {
		c := t.on(m, op, t.id)
		if c.code == 0 {
			return true
		}
		if try == 4 || !strings.Contains(c.stderr, "did not answer") {
			t.r.failf("setup: %s on %s: %s", op, machineNames[m], c.brief())
			return false
		}
	}
}

// startDaemon serves dir over git:// (pushes allowed) on a free port.
func (t *twoTrial) startDaemon(dir string) bool {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.r.failf("setup: listen: %v", err)
		return false
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.r.failf("setup: git --exec-path: %v", err)
		return false
	}
	t.daemon = exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+dir, dir)
	if err := t.daemon.Start(); err != nil {
		t.r.failf("setup: git daemon: %v", err)
		t.daemon = nil
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.r.failf("setup: git daemon did not listen")
			return false
		}
	}
	t.url = "git://127.0.0.1:" + strconv.Itoa(port) + "/project.git"
	return true
}

func (t *twoTrial) stopDaemon() {
	if t.daemon != nil {
		t.daemon.Process.Signal(syscall.SIGCONT)
		t.daemon.Process.Kill()
		t.daemon.Wait()
	}
}

// on runs kandev as machine m, in its clone.
func (t *twoTrial) on(m int, args ...string) cmdResult {
	env, cwd := t.env, t.cwd
	t.env, t.cwd = t.ms[m].env, t.ms[m].clone
	defer func() { t.env, t.cwd = env, cwd }()
	return t.kandev(cmdTimeout, args...)
}

// word is the text step i's turn says: found again in whichever log holds it.
func (t *twoTrial) word(i int, m int) string {
	return fmt.Sprintf("word-%d-%s-%d", t.p.idx, machineNames[m], i)
}

func (t *twoTrial) promptArgs(s twoStep, text string, extra ...string) []string {
	args := []string{"prompt"}
	if s.linger != "" {
		args = append(args, "--linger", s.linger)
	}
	return append(append(args, extra...), t.id, text)
}

func (t *twoTrial) step(i int, s twoStep) {
	w := t.word(i, s.m)
	switch s.act {
	case stepPrompt:
		t.answered(s.m, w, t.on(s.m, t.promptArgs(s, "/say "+w)...), false)
	case stepKill:
		t.killed(s, w)
	case stepFreeze:
		t.daemon.Process.Signal(syscall.SIGSTOP)
		c := t.on(s.m, t.promptArgs(s, "/say "+w)...)
		if c.code == 0 {
			t.r.failf("step %d: a prompt on %s ran against a frozen remote", i, machineNames[s.m])
		}
		t.answered(s.m, w, t.on(s.m, t.promptArgs(s, "/say "+w, "--offline")...), true)
		t.daemon.Process.Signal(syscall.SIGCONT)
	}
}

// answered notes what a prompt's answer says: a turn acknowledged, a
// refusal by name (a claim held, a takeover, a divergence: recovered now),
// or a remote that did not answer. Anything else is a failure.
func (t *twoTrial) answered(m int, w string, c cmdResult, offline bool) {
	switch {
	case c.code == 0:
		t.acked[w] = m
	case c.code == 3 && strings.Contains(c.stderr, "diverged"):
		t.recoverDiverged(m, c.stderr)
	case c.code == 3 && (strings.Contains(c.stderr, "claimed by machine") || strings.Contains(c.stderr, "taken over by machine")):
	case c.code == 3 && strings.Contains(c.stderr, "being claimed by another machine at this moment"):
		// A named refusal, but seen with no other machine claiming (seed
		// 4343 run 95): kept visible until its cause is fixed.
		t.r.advisories = append(t.r.advisories, "prompt on "+machineNames[m]+" refused as claimed at this moment: "+firstLine(c.stderr))
	case c.code == 1 && !offline && strings.Contains(c.stderr, "did not answer"):
	default:
		t.r.failf("prompt on %s: %s", machineNames[m], c.brief())
	}
}

// killed runs a prompt on s.m and SIGKILLs its command and the session's
// owner (a detached one when warm) s.kill after it started.
func (t *twoTrial) killed(s twoStep, w string) {
	m := t.ms[s.m]
	cmd := exec.Command(t.o.kandev, t.promptArgs(s, "/say "+w+"\n/sleep 1500\n/say after")...)
	cmd.Dir, cmd.Env = m.clone, m.env
	if err := cmd.Start(); err != nil {
		t.r.failf("kill step: %v", err)
		return
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return // it ended first: whatever it said, nothing was acknowledged
	case <-time.After(s.kill):
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if pid := ownerPID(m.home, t.id); pid > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	<-done
}

// ownerPID is the owner the record names (0 none).
func ownerPID(home, id string) int {
	b, err := os.ReadFile(filepath.Join(home, "sessions", id+".json"))
	if err != nil {
		return 0
	}
	const key = `"owner_pid":`
	i := strings.Index(string(b), key)
	if i < 0 {
		return 0
	}
	rest := strings.TrimLeft(string(b[i+len(key):]), " ")
	end := strings.IndexAny(rest, ",}\n")
	if end < 0 {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(rest[:end]))
	return n
}
