//go:build unix

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
)

// turnTrial is one turn trial: a demo-agent turn gets the plan's signal,
// then the session is resumed twice and prompted once.
type turnTrial struct {
	*runEnv
	id      string
	pre     int // events in the log before the signalled command
	ki      killInfo
	printed []event
	l0      *sessionLog // the log as the signal left it
	last    *turnInfo   // the signalled command's last turn (nil: none began)
	// interrupted: the last turn is left for the next resume, open (SIGKILL)
	// or closed by kandev with stop_reason shutdown (SIGTERM).
	interrupted bool
	permOpen    bool
	exp         expectation
}

// expectation is what the first resume must do, decided from the log.
type expectation struct {
	cont          int  // continuation turns
	initialResend bool // a start cut before any turn carried its prompt: sent as the initial prompt
	resend        bool // a cut-off turn without prompt_sent: its message sent again
	pauseStrict   bool // a permission question was waiting (ask): exit 5
	pauseMaybe    bool // a permission request open an instant (auto-answered mode)
	nothing       bool // SIGHUP / SIGINT: resume adds no turn at all
}

// stopGraceSlack is what a loaded machine may add to the cancel grace.
const stopGraceSlack = 3 * time.Second

// runTurn is one turn trial: set up, signal, inspect, resume twice, prompt.
func (x *runEnv) runTurn() {
	t := &turnTrial{runEnv: x}
	if !t.setup() || !t.signalled() || !t.inspect() {
		return
	}
	t.checkSignalOutcome()
	t.expect()
	if !t.checkStatusBefore() {
		return
	}
	l1, code, paused, ok := t.firstResume()
	if !ok {
		return
	}
	t.checkRepaired(l1)
	t.checkAfter(l1, code, paused)
}

// setup makes the idle session a `prompt` trial needs.
func (t *turnTrial) setup() bool {
	if t.p.mode != "prompt" {
		return true
	}
	c := t.kandev(cmdTimeout, "start")
	t.id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	if c.code != 0 || t.id == "" {
		t.r.failf("setup: kandev start (no prompt): %s", c.brief())
		return false
	}
	l, err := readLog(t.logPath(t.id), t.id)
	if err != nil || len(l.probs) > 0 || l.torn != nil {
		t.r.failf("setup: log of the idle session is not clean: %v %v", err, l.probs)
		return false
	}
	t.pre = len(l.lines)
	return true
}

// signalled runs the command and sends the signal; it finds the session.
func (t *turnTrial) signalled() bool {
	r, p := t.r, t.p
	args := []string{"--json"}
	if p.scen.perms != "" {
		args = append(args, "--permissions", p.scen.perms)
	}
	if p.mode == "start" {
		args = append(args, "start", p.prompt)
	} else {
		args = append(args, "prompt", t.id, p.prompt)
	}
	t.ki = t.killedRun(args)
	r.kill, r.exitCode, r.stopDur = t.ki, t.ki.exitCode, t.ki.stopDur
	if t.ki.err != "" {
		r.failf("running the killed command: %s", t.ki.err)
		return false
	}
	for i, raw := range t.ki.printed {
		var e event
		json.Unmarshal(raw, &e)
		t.printed = append(t.printed, e)
		if i < t.ki.atSignal {
			r.lastEvent = e.Type
		}
	}
	if t.id == "" && len(t.printed) > 0 {
		t.id = t.printed[0].SessionID
	}
	// The signalled owner's agent dies with it (its supervisor sees the owner go); give it a moment.
	r.staleAgents = len(waitNoAgents(t.cwd, 2*time.Second))
	return t.findSession()
}

// findSession asks list which session there is (a start killed before it
// printed anything may or may not have made one).
func (t *turnTrial) findSession() bool {
	r := t.r
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	lc := t.kandev(cmdTimeout, "--json", "list")
	if lc.code != 0 || json.Unmarshal([]byte(lc.stdout), &list) != nil {
		r.failf("kandev --json list after the signal: %s", lc.brief())
		return false
	}
	switch {
	case t.id == "" && len(list.Sessions) == 0:
		r.land, r.outcome = landNoSession, outNoSession
		t.checkNoSession()
		if t.ki.diedOf != "" && t.ki.diedOf != sigKill {
			// Nothing was acknowledged: the signal came before kandev handled signals.
			r.advisories = append(r.advisories, t.ki.diedOf+" arrived before kandev handled signals (it printed nothing)")
		}
		return false
	case t.id == "" && len(list.Sessions) == 1:
		t.id = list.Sessions[0].ID
	case t.id == "":
		r.failf("start killed before printing: list shows %d sessions, want at most 1", len(list.Sessions))
		return false
	case len(list.Sessions) != 1 || list.Sessions[0].ID != t.id:
		r.failf("list after the signal shows %d session(s), want exactly %s", len(list.Sessions), t.id)
	}
	r.sessionID = t.id
	return true
}

// inspect reads the log the signal left and classifies where it landed.
func (t *turnTrial) inspect() bool {
	r, id := t.r, t.id
	l0, err := readLog(t.logPath(id), id)
	if err != nil {
		r.failf("reading the log: %v", err)
		return false
	}
	t.l0 = l0
	for _, pr := range l0.probs {
		r.failf("log after the signal: %s", pr)
	}
	r.tornBefore = l0.torn != nil
	copyFile(t.logPath(id), filepath.Join(t.dir, "log-after-kill.jsonl"))
	copyFile(filepath.Join(t.home, "sessions", id+".json"), filepath.Join(t.dir, "record-after-kill.json"))
	t.save("printed-before-kill.jsonl", string(joinLines(t.ki.printed)))
	t.checkAcknowledged(t.ki.printed, l0, "after the signal")
	ts0 := turns(l0.events())
	if n := len(ts0); n > 0 && ts0[n-1].startIdx >= t.pre {
		t.last = ts0[n-1]
	}
	for _, u := range ts0 {
		if u != t.last && !u.ended {
			r.failf("turn %s (not the signalled one) has no turn_ended", u.id)
		}
	}
	last := t.last
	t.interrupted = last != nil && (!last.ended || last.stopReason == "shutdown")
	// kandev marks a permission pending in the record before it logs the
	// question and clears it after the answer is logged: either one open
	// means the question may have been unanswered when the owner died.
	t.permOpen = t.interrupted && (last.pendingPermission() || recordPermissionPending(filepath.Join(t.home, "sessions", id+".json")))
	r.land = t.landing()
	return true
}

// landing says where the signal landed: for SIGKILL from the log (what
// reached the disk), for the others from what kandev had printed when the
// signal was sent (kandev writes more while it handles the signal).
func (t *turnTrial) landing() string {
	if !t.ki.killed {
		return landExited
	}
	last, permOpen := t.last, t.permOpen
	if t.p.signal != sigKill {
		evs := make([]event, 0, t.ki.atSignal)
		evs = append(evs, t.printed[:t.ki.atSignal]...)
		last = nil
		if ts := turns(evs); len(ts) > 0 {
			last = ts[len(ts)-1]
		}
		permOpen = last != nil && !last.ended && last.pendingPermission()
	}
	switch {
	case last == nil:
		return landBeforeTurn
	case last.ended:
		return landAfterEnd
	case permOpen:
		return landPermission
	case len(last.openCalls()) > 0:
		return landToolOpen
	case last.agentEvents == 0:
		return landUnaccepted
	}
	return landMidTurn
}
