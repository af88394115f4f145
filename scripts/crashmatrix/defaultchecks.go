//go:build unix

package main

import (
	"strings"
	"time"
)

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
