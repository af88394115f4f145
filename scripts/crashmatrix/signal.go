//go:build unix

package main

import "time"

// checkSignalOutcome checks how kandev ended after its signal: the exit
// code, how long it took, and how the signalled turn was left in the log.
func (t *turnTrial) checkSignalOutcome() {
	r, ki := t.r, t.ki
	if !ki.killed {
		if ki.exitCode != 0 {
			r.failf("kandev exited by itself with code %d before the kill point", ki.exitCode)
		}
		if t.interrupted {
			r.failf("kandev exited by itself (no signal) but left turn %s open", t.last.id)
		}
		return
	}
	if ki.capped {
		r.failf("kandev still ran %s after it started (%s at %dms); SIGKILLed it", hardCap, t.p.signal, ki.at.Milliseconds())
	}
	switch t.p.signal {
	case sigTerm, sigTerm2:
		t.checkTerm()
	case sigHup:
		t.checkHup()
	case sigInt:
		t.checkInt()
	}
}

// endedNormally: the signalled turn had already ended on its own.
func (t *turnTrial) endedNormally() bool {
	return t.last != nil && t.last.ended && t.last.stopReason == "end_turn"
}

// checkTerm: exit 143 within the cancel grace; the turn closed with
// stop_reason shutdown and unknown-outcome results (a second SIGTERM may
// leave it open for repair instead).
func (t *turnTrial) checkTerm() {
	r, ki, last := t.r, t.ki, t.last
	bound := cancelGrace*time.Second + stopGraceSlack
	if ki.second {
		bound = t.p.secondAt + stopGraceSlack
	}
	if ki.stopDur > bound {
		r.failf("%s: kandev took %s to exit, want at most %s", t.p.signal, ki.stopDur.Round(time.Millisecond), bound)
	}
	switch {
	case ki.diedOf == sigTerm && len(ki.printed) == 0:
		r.advisories = append(r.advisories, "SIGTERM arrived before kandev handled signals (it printed nothing)")
		return
	case ki.exitCode == 143:
	case ki.exitCode == 0 && t.endedNormally():
	default:
		r.failf("%s: exit %d (died of %q), want 143", t.p.signal, ki.exitCode, ki.diedOf)
	}
	if last == nil {
		return
	}
	if last.ended && last.stopReason != "shutdown" && last.stopReason != "end_turn" {
		r.failf("%s: turn %s ended with stop_reason %q, want shutdown", t.p.signal, last.id, last.stopReason)
	}
	if ki.second {
		return // the second SIGTERM stops at once: the turn may be left for repair
	}
	if t.l0.torn != nil {
		r.failf("SIGTERM left a torn last log line")
	}
	if !last.ended {
		r.failf("SIGTERM left turn %s without turn_ended, want stop_reason shutdown", last.id)
	}
	if open := last.openCalls(); last.ended && len(open) > 0 {
		r.failf("SIGTERM closed turn %s but tool call(s) %v have no result, want unknown-outcome results", last.id, open)
	}
}

// checkHup: kandev carries the turn to its normal end and exits 0.
func (t *turnTrial) checkHup() {
	r, ki, last := t.r, t.ki, t.last
	if ki.diedOf == sigHup && len(ki.printed) == 0 && last == nil {
		// kandev holds signals from main's first line; one that comes while
		// the runtime and packages start still ends it, before anything was
		// acknowledged (checkAcknowledged holds that).
		r.advisories = append(r.advisories, "SIGHUP arrived before kandev held signals (it printed nothing)")
		return
	}
	if ki.exitCode != 0 {
		r.failf("SIGHUP: exit %d (died of %q), want 0 after the turn ran to its end", ki.exitCode, ki.diedOf)
	}
	switch {
	case last == nil:
		r.failf("SIGHUP: the turn never ran (no turn_started in the log), want it carried to its end")
	case !last.ended || last.stopReason != "end_turn":
		r.failf("SIGHUP: turn %s ended=%v stop_reason %q, want end_turn", last.id, last.ended, last.stopReason)
	}
}

// checkInt: exit 130 and the turn cancelled.
func (t *turnTrial) checkInt() {
	r, ki, last := t.r, t.ki, t.last
	switch {
	case ki.exitCode == 130:
	case ki.exitCode == 0 && t.endedNormally():
	default:
		r.failf("SIGINT: exit %d (died of %q), want 130", ki.exitCode, ki.diedOf)
	}
	if last != nil && (!last.ended || last.stopReason != "cancelled" && last.stopReason != "end_turn") {
		r.failf("SIGINT: turn %s ended=%v stop_reason %q, want cancelled", last.id, last.ended, last.stopReason)
	}
}

// expect decides from the log what the first resume must do.
func (t *turnTrial) expect() {
	p, last, e := t.p, t.last, &t.exp
	if t.ki.killed && (p.signal == sigHup || p.signal == sigInt) {
		e.nothing = true
		return
	}
	// A first prompt no turn carried yet is sent as the initial prompt.
	e.initialResend = p.mode == "start" && last == nil
	e.pauseStrict = t.permOpen && p.scen.perms == "ask"
	e.pauseMaybe = t.permOpen && p.scen.perms != "ask" // auto-answered: open only for an instant
	// A turn whose prompt never reached the agent (no prompt_sent) is sent
	// again with its own message, not continued; one that was sent is
	// continued even if the agent had answered nothing.
	e.resend = t.interrupted && !e.initialResend && !last.sent && !t.permOpen
	if t.interrupted && !e.initialResend && !e.pauseStrict && !e.resend {
		e.cont = 1
	}
}

// checkStatusBefore checks the verdict before resume.
func (t *turnTrial) checkStatusBefore() bool {
	r, p, last := t.r, t.p, t.last
	st, ok := t.status(t.id)
	if !ok {
		return false
	}
	r.preBadge, r.preReason = st.Status.Badge, st.Status.Reason
	if st.Status.Reason == "agent_running" || st.Status.OwnerPID != 0 {
		r.failf("status says the owner is alive after %s: reason %s owner_pid %d", p.signal, st.Status.Reason, st.Status.OwnerPID)
	}
	switch {
	case last == nil && !t.exp.nothing:
		if st.Status.Badge != "idle" && !(p.mode == "start" && st.Status.Badge == "needs-resume") {
			r.failf("status before resume: badge %q, want idle (no turn began)", st.Status.Badge)
		}
	case t.interrupted:
		if st.Status.Badge != "needs-resume" && !(t.permOpen && st.Status.Badge == "paused") {
			r.failf("status before resume: badge %q, want needs-resume (turn %s left for resume)", st.Status.Badge, last.id)
		}
		if !last.ended && !st.Status.Interrupted {
			r.failf("status before resume: interrupted=false for open turn %s", last.id)
		}
	default:
		if st.Status.Badge != "idle" {
			r.failf("status before resume: badge %q, want idle (nothing left for resume)", st.Status.Badge)
		}
		if st.Status.Interrupted {
			r.failf("status before resume: interrupted=true although nothing is left for resume")
		}
	}
	if r.staleAgents > 0 && st.Status.Reason != "stale_execution" && aliveAny(demoAgents(t.cwd)) {
		r.failf("an agent of the dead owner is alive but status reason is %s, want stale_execution", st.Status.Reason)
	}
	return true
}
