//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Trials of the default path, where owners linger: the command a person
// types starts a detached owner (kandev __serve) and follows its turn.
// Either of the two processes gets the signal at the kill point:
//
//   - follower: the command. SIGKILL leaves the turn to the owner, which
//     carries it to its end (the next command runs as usual); SIGTERM
//     interrupts it (exit 143, turn_ended shutdown, continued once by the
//     next resume); SIGHUP lets it run to its end (exit 0); SIGINT cancels
//     it (exit 130, never continued).
//   - owner: the detached owner. SIGKILL: the command takes the session
//     over, repairs the turn and follows its one continuation (exit 0);
//     SIGTERM: the turn ends shutdown, the command exits 143 and the next
//     resume continues it once; SIGHUP: the owner carries the turn to its
//     end and the command exits 0.
//
// Whatever the point: the log stays whole, everything the command printed
// is in it, the prompt reaches the agent at most once (a cut-off turn is
// continued, never sent again) and only a turn cut off by a shutdown gets a
// continuation.
const (
	kindFollower = "follower"
	kindDetached = "detached"
)

var defaultKinds = map[string]bool{kindFollower: true, kindDetached: true}

// defaultSignals are the signals each target gets on the default path.
var defaultSignals = map[string][]choice{
	kindFollower: {{sigKill, 2}, {sigTerm, 2}, {sigHup, 1}, {sigInt, 1}},
	kindDetached: {{sigKill, 2}, {sigTerm, 2}, {sigHup, 1}},
}

// defaultLinger is the --linger of the killed command: long enough that
// its owner is warm through the checks, which close it.
const defaultLinger = "30s"

// sessionRecord is what the default-path trials read of a session record.
type sessionRecord struct {
	OwnerPID    int    `json:"owner_pid"`
	Detached    bool   `json:"owner_detached"`
	CurrentTurn string `json:"current_turn"`
}

// record reads the record of the home's only session (id "" : whichever).
func (x *runEnv) record(id string) (sessionRecord, string) {
	var rec sessionRecord
	if id == "" {
		m, _ := filepath.Glob(filepath.Join(x.home, "sessions", "*.json"))
		if len(m) != 1 {
			return rec, ""
		}
		id = strings.TrimSuffix(filepath.Base(m[0]), ".json")
	}
	b, err := os.ReadFile(filepath.Join(x.home, "sessions", id+".json"))
	if err == nil {
		json.Unmarshal(b, &rec)
	}
	return rec, id
}

// detachedOwner is the pid of the session's live detached owner, waiting up
// to d for one (0 when none came).
func (x *runEnv) detachedOwner(d time.Duration) int {
	for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		if rec, _ := x.record(""); rec.Detached && rec.OwnerPID > 0 && aliveNotZombie(rec.OwnerPID) {
			return rec.OwnerPID
		}
		if time.Now().After(deadline) {
			return 0
		}
	}
}

// settled waits until session id runs no turn (or has no owner) and
// reports whether it did within d.
func (x *runEnv) settled(id string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		rec, _ := x.record(id)
		if rec.CurrentTurn == "" || rec.OwnerPID == 0 || !aliveNotZombie(rec.OwnerPID) {
			return true
		}
	}
	return false
}

// defaultTrial is one trial of the default path.
type defaultTrial struct {
	*runEnv
	id      string
	pre     int // log lines before the killed command
	ki      killInfo
	printed []event
	// paused: the turn was cut off while a permission request was open, so
	// its continuation pauses (exit 5) instead of running (docs/resume.md).
	paused bool
}

// pausedAfterCut reports that turn k was cut off by a shutdown and its
// continuation paused: a permission request of it was open (in the log, or
// still marked pending in the record) when it was cut.
func (t *defaultTrial) pausedAfterCut(k *turnInfo, l *sessionLog) bool {
	if k == nil || !k.ended || k.stopReason != "shutdown" {
		return false
	}
	for _, e := range l.events()[k.startIdx:] {
		if e.Type == "marker" && e.Kind == "continuation_paused" {
			return true
		}
	}
	return false
}

// runDefault: set up, run the command with a detached owner, signal the
// target, then check the signal's effect and what the next commands do.
func (x *runEnv) runDefault() {
	t := &defaultTrial{runEnv: x}
	if !t.setup() {
		return
	}
	args := []string{"--json"}
	if t.p.scen.perms != "" {
		args = append(args, "--permissions", t.p.scen.perms)
	}
	if t.p.mode == "start" {
		args = append(args, "start", "--linger", defaultLinger, t.p.prompt)
	} else {
		args = append(args, "prompt", "--linger", defaultLinger, t.id, t.p.prompt)
	}
	t.ki = t.killedRun(args)
	r := t.r
	r.kill, r.exitCode, r.stopDur = t.ki, t.ki.exitCode, t.ki.stopDur
	if t.ki.err != "" {
		r.failf("running the killed command: %s", t.ki.err)
		return
	}
	for i, raw := range t.ki.printed {
		var e event
		json.Unmarshal(raw, &e)
		t.printed = append(t.printed, e)
		if i < t.ki.atSignal {
			r.lastEvent = e.Type
		}
	}
	if t.id == "" {
		if len(t.printed) > 0 {
			t.id = t.printed[0].SessionID
		} else if _, id := t.record(""); id != "" {
			t.id = id
		}
	}
	if t.id == "" {
		r.land, r.outcome = landNoSession, outNoSession
		return
	}
	r.sessionID = t.id
	defer t.finish()
	if !t.settled(t.id, 30*time.Second) {
		r.failf("the owner still runs a turn 30 s after the command ended")
		return
	}
	l, ok := t.cleanLog(t.id, "after the signal")
	if !ok {
		return
	}
	t.checkAcknowledged(t.ki.printed, l, "after the signal")
	k := t.killedTurn(l)
	r.land = t.landed(k)
	if !t.ki.killed {
		t.checkUnsignalled(k)
		return
	}
	if t.ki.capped {
		r.failf("the command still ran %s after it started; SIGKILLed it", hardCap)
	}
	if t.p.kind == kindFollower {
		t.checkFollowerSignalled(k, l)
	} else {
		t.checkOwnerSignalled(k, l)
	}
}

// setup makes the idle session a prompt trial needs (no owner left).
func (t *defaultTrial) setup() bool {
	if t.p.mode != "prompt" {
		return true
	}
	c := t.kandev(cmdTimeout, "start", "--linger", "0")
	t.id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	if c.code != 0 || t.id == "" {
		t.r.failf("setup: kandev start (no prompt): %s", c.brief())
		return false
	}
	l, err := readLog(t.logPath(t.id), t.id)
	if err != nil || len(l.probs) > 0 || l.torn != nil {
		t.r.failf("setup: log of the idle session is not clean: %v", err)
		return false
	}
	t.pre = len(l.lines)
	return true
}

// killedTurn is the first turn the killed command's prompt began (nil: none).
func (t *defaultTrial) killedTurn(l *sessionLog) *turnInfo {
	for _, u := range turns(l.events()) {
		if u.startIdx >= t.pre && u.source != "continuation" {
			return u
		}
	}
	return nil
}

// landed classifies the kill point from what the command had printed.
func (t *defaultTrial) landed(k *turnInfo) string {
	if !t.ki.killed {
		return landExited
	}
	var last *turnInfo
	if ts := turns(t.printed[:t.ki.atSignal]); len(ts) > 0 {
		last = ts[len(ts)-1]
	}
	switch {
	case last == nil:
		return landBeforeTurn
	case last.ended:
		return landAfterEnd
	case len(last.openCalls()) > 0:
		return landToolOpen
	case last.agentEvents == 0:
		return landUnaccepted
	}
	return landMidTurn
}

// oncePerPrompt: the prompt reached the agent at most once, and every
// continuation follows a turn cut off by a shutdown, once.
func (t *defaultTrial) oncePerPrompt(l *sessionLog, when string) (conts int) {
	sent, cut := 0, 0
	for _, u := range turns(l.events()) {
		if u.startIdx < t.pre {
			continue
		}
		switch {
		case u.source == "continuation":
			conts++
		case u.sent && strings.TrimSpace(u.userText) == strings.TrimSpace(t.p.prompt):
			sent++
		}
		if u.ended && u.stopReason == "shutdown" {
			cut++
		}
	}
	if sent > 1 {
		t.r.failf("%s: the prompt was sent to the agent %d times", when, sent)
	}
	if conts > 1 || conts > cut {
		t.r.failf("%s: %d continuation(s) for %d turn(s) cut off by a shutdown", when, conts, cut)
	}
	return conts
}

// finish closes whatever lingers, so no agent outlives the trial.
func (t *defaultTrial) finish() {
	t.kandev(cmdTimeout, "close", "--now", t.id)
	t.waitOwnerGone(t.id)
}

// ownerSignal sends sig to the session's detached owner, waiting up to 3 s
// for one to exist; false when none did or it had exited.
func (x *runEnv) ownerSignal(sig syscall.Signal) bool {
	pid := x.detachedOwner(3 * time.Second)
	return pid > 0 && syscall.Kill(pid, sig) == nil
}

func (p *plan) describeDefault() string {
	k := p.killClass()
	if k == "delay" {
		k = fmt.Sprintf("delay %dms", p.killDelay.Milliseconds())
	} else {
		k = "at first " + k
	}
	return fmt.Sprintf("run %d: %s of %s/%s %s %s agent-delay=%dms", p.idx, p.signal, p.kind, p.scen.name, p.mode, k, p.agentDelay)
}
