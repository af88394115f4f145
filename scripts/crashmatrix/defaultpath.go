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

// checkUnsignalled: the command ended by itself, with its turn done.
func (t *defaultTrial) checkUnsignalled(k *turnInfo) {
	if t.ki.exitCode != 0 {
		t.r.failf("the command exited by itself with code %d before the kill point", t.ki.exitCode)
	}
	if k != nil && (!k.ended || k.stopReason != "end_turn") {
		t.r.failf("the command exited by itself but turn %s ended=%v %q", k.id, k.ended, k.stopReason)
	}
	t.r.outcome = outNone
}

// endedBeforeSignal: the turn had ended before the signal came.
func (t *defaultTrial) endedBeforeSignal(k *turnInfo) bool {
	return k != nil && k.ended && k.stopReason == "end_turn" && t.ki.exitCode == 0
}

func (t *defaultTrial) checkFollowerSignalled(k *turnInfo, l *sessionLog) {
	r, sig := t.r, t.p.signal
	switch sig {
	case sigKill:
		// The owner carries the turn to its end; the next command runs as usual.
		if k != nil && (!k.ended || k.stopReason != "end_turn") {
			r.failf("SIGKILL of the command: turn %s ended=%v %q, want end_turn (its owner carries it)", k.id, k.ended, k.stopReason)
		}
		if t.oncePerPrompt(l, "after SIGKILL of the command") != 0 {
			r.failf("SIGKILL of the command: the owner's turn was continued, want it carried to its end")
		}
		t.nextPrompt()
		r.outcome = outNone
	case sigTerm:
		switch {
		case t.ki.exitCode == 143:
		case t.endedBeforeSignal(k):
		default:
			r.failf("SIGTERM of the command: exit %d (died of %q), want 143", t.ki.exitCode, t.ki.diedOf)
		}
		if bound := cancelGrace*time.Second + stopGraceSlack; t.ki.stopDur > bound {
			r.failf("SIGTERM of the command: it took %s to exit, want at most %s", t.ki.stopDur.Round(time.Millisecond), bound)
		}
		if k != nil && k.ended && k.stopReason != "shutdown" && k.stopReason != "end_turn" {
			r.failf("SIGTERM of the command: turn %s ended %q, want shutdown", k.id, k.stopReason)
		}
		t.resumeOnce(k)
	case sigHup:
		if t.ki.exitCode != 0 {
			r.failf("SIGHUP of the command: exit %d (died of %q), want 0 after the turn ran to its end", t.ki.exitCode, t.ki.diedOf)
		}
		if k == nil || !k.ended || k.stopReason != "end_turn" {
			r.failf("SIGHUP of the command: the turn did not run to its end (%v)", k)
		}
		t.resumeAddsNothing()
	case sigInt:
		switch {
		case t.ki.exitCode == 130:
		case t.endedBeforeSignal(k):
		default:
			r.failf("SIGINT of the command: exit %d (died of %q), want 130", t.ki.exitCode, t.ki.diedOf)
		}
		if k != nil && (!k.ended || k.stopReason != "cancelled" && k.stopReason != "end_turn") {
			r.failf("SIGINT of the command: turn %s ended=%v %q, want cancelled", k.id, k.ended, k.stopReason)
		}
		t.resumeAddsNothing()
	}
}

func (t *defaultTrial) checkOwnerSignalled(k *turnInfo, l *sessionLog) {
	r, sig := t.r, t.p.signal
	switch sig {
	case sigKill:
		// The command takes the session over and shows the turn's follow-up
		// (or says it is paused: a permission request was open).
		t.paused = t.pausedAfterCut(k, l)
		if t.paused {
			if t.ki.exitCode != 5 {
				r.failf("SIGKILL of the detached owner with a permission request open: the command exited %d, want 5 (paused)", t.ki.exitCode)
			}
		} else if t.ki.exitCode != 0 {
			r.failf("SIGKILL of the detached owner: the command exited %d (died of %q), want 0 with the turn followed up", t.ki.exitCode, t.ki.diedOf)
		}
		conts := t.oncePerPrompt(l, "after SIGKILL of the owner")
		if k != nil && k.ended && k.stopReason == "shutdown" && k.sent && !t.paused && conts != 1 {
			r.failf("SIGKILL of the detached owner: turn %s was cut off after it was sent but continued %d times, want once", k.id, conts)
		}
		r.outcome, r.continuations = outNone, conts
		switch {
		case t.paused:
			r.outcome = outPaused
		case conts > 0:
			r.outcome = outContinued
		}
		t.resumeAddsNothing()
	case sigTerm:
		switch {
		case t.ki.exitCode == 143:
		case t.ki.exitCode == 0 && (k == nil || k.stopReason == "end_turn"):
			// Ended first, or terminated before the turn began: the command ran it.
		default:
			r.failf("SIGTERM of the detached owner: the command exited %d (died of %q), want 143", t.ki.exitCode, t.ki.diedOf)
		}
		if k != nil && k.ended && k.stopReason != "shutdown" && k.stopReason != "end_turn" {
			r.failf("SIGTERM of the detached owner: turn %s ended %q, want shutdown", k.id, k.stopReason)
		}
		t.resumeOnce(k)
	case sigHup:
		if t.ki.exitCode != 0 {
			r.failf("SIGHUP of the detached owner: the command exited %d (died of %q), want 0", t.ki.exitCode, t.ki.diedOf)
		}
		if k == nil || !k.ended || k.stopReason != "end_turn" {
			r.failf("SIGHUP of the detached owner: the turn did not run to its end (%v)", k)
		}
		t.resumeAddsNothing()
	}
}

// closeWarm ends the session's warm owner so that the next command owns it.
func (t *defaultTrial) closeWarm() {
	if c := t.kandev(cmdTimeout, "close", t.id); c.code != 0 {
		t.r.failf("close: %s", c.brief())
	}
	t.waitOwnerGone(t.id)
}

// resumeOnce: after a SIGTERM the next resume continues a cut-off turn
// that reached the agent once, and a second resume adds nothing.
func (t *defaultTrial) resumeOnce(k *turnInfo) {
	t.closeWarm()
	before, ok := t.cleanLog(t.id, "before resume")
	if !ok {
		return
	}
	c := t.kandev(cmdTimeout, t.withPerms("resume", t.id)...)
	after, ok := t.cleanLog(t.id, "after resume")
	if !ok {
		return
	}
	t.paused = t.pausedAfterCut(k, after)
	if c.code != 0 && !(t.paused && c.code == 5) {
		t.r.failf("resume after SIGTERM: %s", c.brief())
	}
	t.checkAppendOnly(before, after, "resume")
	conts := t.oncePerPrompt(after, "after resume")
	if k != nil && k.ended && k.stopReason == "shutdown" && k.sent && !t.paused && conts != 1 {
		t.r.failf("resume after SIGTERM: turn %s continued %d times, want once", k.id, conts)
	}
	t.r.outcome, t.r.continuations = outNone, conts
	switch {
	case t.paused:
		t.r.outcome = outPaused
	case conts > 0:
		t.r.outcome = outContinued
	}
	t.resumeAddsNothing()
}

// resumeAddsNothing: with nothing left to continue, resume runs no turn.
func (t *defaultTrial) resumeAddsNothing() {
	t.closeWarm()
	before, ok := t.cleanLog(t.id, "before the last resume")
	if !ok {
		return
	}
	if c := t.kandev(cmdTimeout, t.withPerms("resume", t.id)...); c.code != 0 && !(t.paused && c.code == 5) {
		t.r.failf("resume with nothing to continue: %s", c.brief())
	}
	if t.r.outcome == "aborted" {
		t.r.outcome = outNone
	}
	if after, ok := t.cleanLog(t.id, "after the last resume"); ok {
		t.checkAppendOnly(before, after, "the last resume")
		if n, m := len(turns(before.events())), len(turns(after.events())); m != n {
			t.r.failf("resume with nothing to continue ran %d turn(s)", m-n)
		}
	}
}

// nextPrompt: the next command runs a turn as usual (through the warm owner
// when one lingers).
func (t *defaultTrial) nextPrompt() {
	c := t.kandev(cmdTimeout, t.withPerms("prompt", t.id, "/say next command")...)
	if c.code != 0 || !strings.Contains(c.stdout, "next command") {
		t.r.failf("the next prompt after the kill: %s", c.brief())
	}
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
