//go:build unix

package main

import (
	"fmt"
	"strings"
)

// firstResume runs the first resume and checks what it added against the
// expectation: the continuations, re-sent prompts and the pause.
func (t *turnTrial) firstResume() (l1 *sessionLog, code int, paused, ok bool) {
	r, e := t.r, &t.exp
	res, restored := t.kandevStream(cmdTimeout, `"type":"agent_started"`, t.withPerms("--json", "resume", t.id)...)
	r.resumeDur, r.restoreDur = res.dur, restored
	t.save("resume1.out", res.stdout+"\n--- stderr (exit "+fmt.Sprint(res.code)+")\n"+res.stderr)
	switch {
	case res.timedOut:
		r.failf("resume timed out")
		return nil, 0, false, false
	case res.code == 5 && (e.pauseStrict || e.pauseMaybe):
		paused = true
		if !strings.Contains(strings.ToLower(res.stderr+res.stdout), "permission") {
			r.failf("resume exit 5 without saying a permission was pending: %s", res.brief())
		}
	case res.code == 0 && e.pauseMaybe:
		e.cont = 1
		r.advisories = append(r.advisories, "log shows an unanswered "+t.p.scen.perms+" permission request, kandev continued instead of pausing")
	case res.code == 0 && e.pauseStrict:
		// Keep checking the rest against what kandev did (it continued).
		r.failf("resume: exit 0 and continued, want exit 5 (turn %s has an unanswered permission request in the log)", t.last.id)
		e.cont = 1
	case e.pauseStrict:
		r.failf("resume: %s, want exit 5 (a permission request was pending)", res.brief())
		return nil, 0, false, false
	case res.code != 0:
		r.failf("resume: %s, want exit 0", res.brief())
		return nil, 0, false, false
	}
	if paused {
		e.cont = 0
	}
	l1, ok = t.cleanLog(t.id, "after resume")
	if !ok {
		return nil, 0, false, false
	}
	t.checkAppendOnly(t.l0, l1, "resume")
	t.checkAcknowledged(t.ki.printed, l1, "after resume")
	t.checkResumeTurns(turns(l1.events()[len(t.l0.lines):]), paused)
	return l1, res.code, paused, true
}

// checkResumeTurns counts the turns the first resume ran by source.
func (t *turnTrial) checkResumeTurns(added []*turnInfo, paused bool) {
	r, e, last := t.r, t.exp, t.last
	conts, initials, others, resent := 0, 0, 0, 0
	for _, u := range added {
		if e.resend && resent == 0 && u.source != "continuation" && u.source != "initial" {
			resent++
			if u.userText != last.userText {
				r.failf("re-sent turn's message differs: %.60q, want %.60q", u.userText, last.userText)
			}
			continue
		}
		switch u.source {
		case "continuation":
			conts++
		case "initial":
			initials++
			if u.userText != t.p.prompt {
				r.failf("re-sent initial prompt differs: %.60q", u.userText)
			}
		default:
			others++
		}
		if !u.ended || u.stopReason != "end_turn" {
			r.failf("resumed turn %s (%s) ended=%v stop_reason %q, want end_turn", u.id, u.source, u.ended, u.stopReason)
		}
	}
	r.continuations = conts
	if conts != e.cont {
		r.failf("%d continuation turn(s) after resume, want %d (%s landed %s)", conts, e.cont, t.p.signal, r.land)
	}
	wantInit := 0
	if e.initialResend && !paused {
		wantInit = 1
	}
	if initials != wantInit {
		r.failf("%d re-sent initial prompt turn(s), want %d (%s landed %s)", initials, wantInit, t.p.signal, r.land)
	}
	if others != 0 {
		r.failf("resume ran %d turn(s) of another source", others)
	}
	if e.resend && !paused && resent != 1 {
		r.failf("the unaccepted turn %s was not sent again (%d re-sent)", last.id, resent)
	}
	switch {
	case paused:
		r.outcome = outPaused
	case conts > 0:
		r.outcome = outContinued
	case initials > 0:
		r.outcome = outInitialResent
	case resent > 0:
		r.outcome = outMessageResent
	default:
		r.outcome = outNone
	}
}

// checkRepaired: the interrupted turn is closed with shutdown and each tool
// call it left open has exactly one unknown-outcome result; every turn has
// ended and every tool call has a result; every event belongs to a turn
// the log started.
func (t *turnTrial) checkRepaired(l1 *sessionLog) {
	r, last := t.r, t.last
	ev1 := l1.events()
	all1 := turns(ev1)
	if t.interrupted {
		var u *turnInfo
		for _, x := range all1 {
			if x.id == last.id {
				u = x
			}
		}
		if u == nil || !u.ended || u.stopReason != "shutdown" {
			r.failf("interrupted turn %s not closed with stop_reason shutdown", last.id)
		}
		open := last.unresolvedCalls()
		for _, c := range open {
			if u == nil || !u.unknown[c] {
				r.failf("tool call %s of interrupted turn %s got no tool_result with tool_status unknown", c, last.id)
			}
		}
		if u != nil && len(u.unknown) != len(open) {
			r.failf("%d unknown-outcome tool results for %d open tool calls", len(u.unknown), len(open))
		}
		for c, end := range last.children {
			if end == "" && (u == nil || u.children[c] != "unknown") {
				r.failf("child %s running when turn %s was interrupted ended %q after resume, want unknown", c, last.id, u.children[c])
			}
		}
	}
	for _, u := range all1 {
		if !u.ended {
			r.failf("turn %s still open after resume", u.id)
		}
		for _, c := range u.calls {
			switch {
			case u.results[c]:
			case u.stopReason == "cancelled":
				// Cancelling may leave a call the agent never finished; nothing claims an outcome.
				r.advisories = append(r.advisories, "tool call of a cancelled turn has no tool_result")
			default:
				r.failf("tool call %s of turn %s has no tool_result after resume", c, u.id)
			}
		}
		for c, end := range u.children {
			if end == "" {
				r.failf("child %s of turn %s has no recorded end after resume", c, u.id)
			}
		}
		if (last == nil || u.id != last.id || !t.interrupted) && len(u.unknown) > 0 {
			r.failf("turn %s (not interrupted) got unknown-outcome results", u.id)
		}
	}
	started := map[string]bool{}
	for _, e := range ev1 {
		switch {
		case e.Type == "turn_started":
			started[e.TurnID] = true
		case e.TurnID != "" && !started[e.TurnID]:
			r.failf("%s (seq %d) for turn %s, which the log never started", e.Type, e.Seq, e.TurnID)
		}
	}
}

// checkAfter: the verdict after resume, a second resume that adds nothing,
// and a later prompt that works with no extra continuation.
func (t *turnTrial) checkAfter(l1 *sessionLog, code int, paused bool) {
	r, id := t.r, t.id
	st1, ok := t.status(id)
	if !ok {
		return
	}
	wantBadge := "idle"
	if paused {
		wantBadge = "paused"
		if st1.Status.Paused == "" {
			r.failf("status after the paused resume names no reason")
		}
	}
	if st1.Status.Badge != wantBadge {
		r.failf("status after resume: badge %q, want %s", st1.Status.Badge, wantBadge)
	}
	t.checkAgentMemory(st1.Session.ResumeToken, turns(l1.events()), t.pre)

	res2 := t.kandev(cmdTimeout, t.withPerms("resume", id)...)
	t.save("resume2.out", res2.stdout+"\n--- stderr (exit "+fmt.Sprint(res2.code)+")\n"+res2.stderr)
	if res2.code != code {
		r.failf("second resume: %s, want exit %d like the first", res2.brief(), code)
	}
	l2, ok := t.cleanLog(id, "after the second resume")
	if !ok {
		return
	}
	t.checkAppendOnly(l1, l2, "second resume")
	if n := len(turns(l2.events()[len(l1.lines):])); n != 0 {
		r.failf("second resume started %d turn(s)", n)
	}

	pc := t.kandev(cmdTimeout, t.withPerms("prompt", id, "final check")...)
	if pc.code != 0 {
		r.failf("prompt after recovery: %s", pc.brief())
		return
	}
	l3, ok := t.cleanLog(id, "after the final prompt")
	if !ok {
		return
	}
	t.checkAppendOnly(l2, l3, "final prompt")
	nt := turns(l3.events()[len(l2.lines):])
	if len(nt) != 1 || nt[0].source != "user" || !nt[0].ended || nt[0].stopReason != "end_turn" {
		var desc []string
		for _, u := range nt {
			desc = append(desc, fmt.Sprintf("%s/%s/%s", u.id, u.source, u.stopReason))
		}
		r.failf("final prompt ran turns %v, want one user turn ending end_turn", desc)
	}
	total := 0
	for _, u := range turns(l3.events()) {
		if u.source == "continuation" {
			total++
		}
	}
	if total != t.exp.cont {
		r.failf("%d continuation(s) in the final log, want %d", total, t.exp.cont)
	}
	if st3, ok := t.status(id); ok && st3.Status.Badge != "idle" {
		r.failf("status after the final prompt: badge %q, want idle", st3.Status.Badge)
	}
}
