//go:build unix

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/history"
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
	// refused is every prompt refused by name (a claim held, a remote that
	// did not answer): its word, and the machine that refused it.
	refused map[string]int
	// refusals counts the divergences refused, and recovered.
	refusals int
	// timings: each command's machine, arguments and duration, kept in the
	// run's directory (timings.txt; -keep keeps it) to see where time goes.
	timings strings.Builder
	began   time.Time
}

func (x *runEnv) runTwo() {
	t := &twoTrial{runEnv: x, tp: x.p.two, acked: map[string]int{}, refused: map[string]int{}, began: time.Now()}
	defer t.stopDaemon()
	defer func() { t.save("timings.txt", t.timings.String()) }()
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

// on runs kandev as machine m, in its clone.
func (t *twoTrial) on(m int, args ...string) cmdResult {
	env, cwd := t.env, t.cwd
	t.env, t.cwd = t.ms[m].env, t.ms[m].clone
	defer func() { t.env, t.cwd = env, cwd }()
	c := t.kandev(cmdTimeout, args...)
	t.timed(m, c.dur, c.code, args...)
	return c
}

// timed notes one command in the trial's timings.
func (t *twoTrial) timed(m int, d time.Duration, code int, args ...string) {
	fmt.Fprintf(&t.timings, "%6.2fs %s %5dms exit %d: %s\n", time.Since(t.began).Seconds(), machineNames[m], d.Milliseconds(), code, history.Clip(strings.Join(args, " "), 80))
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
		t.refused[w] = s.m
		t.answered(s.m, w, t.offlineAfterRefusal(s, w), true)
		t.daemon.Process.Signal(syscall.SIGCONT)
	}
}

// offlineAfterRefusal sends a frozen remote's refused prompt again with
// --offline, as the refusal says to. While the refused prompt's input
// stayed queued, an owner was started for it, which held the session
// while it tried the claim: a --linger prompt was refused meanwhile as
// "owned by another process". Should that be seen again, it is an
// advisory, and the prompt is sent again once that owner has given up.
func (t *twoTrial) offlineAfterRefusal(s twoStep, w string) cmdResult {
	for try := 0; ; try++ {
		c := t.on(s.m, t.promptArgs(s, "/say "+w, "--offline")...)
		if try == 5 || c.code != 3 || !strings.Contains(c.stderr, "owned by another process") {
			return c
		}
		t.r.advisories = append(t.r.advisories, "prompt --offline on "+machineNames[s.m]+" right after its refusal: "+firstLine(c.stderr))
		time.Sleep(time.Second)
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
		t.refused[w] = m
	case c.code == 3 && strings.Contains(c.stderr, "being claimed by another machine at this moment"):
		t.refused[w] = m
		// A named refusal, but seen with no other machine claiming (seed
		// 4343 run 95): kept visible until its cause is fixed.
		t.r.advisories = append(t.r.advisories, "prompt on "+machineNames[m]+" refused as claimed at this moment: "+firstLine(c.stderr))
	case c.code == 1 && !offline && strings.Contains(c.stderr, "did not answer"):
		t.refused[w] = m
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
	t0 := time.Now()
	defer func() { t.timed(s.m, time.Since(t0), -9, "killed prompt") }()
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
