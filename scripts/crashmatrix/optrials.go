//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// importTrial: `import --keep-id` of a long session beside other sessions.
// Killed, the import is absent from list (and a retry succeeds) or complete.
type importTrial struct {
	*runEnv
	others []string
}

func (t *importTrial) prepare() bool {
	for i := 1; i < t.p.opSessions; i++ {
		id, ok := t.importSmall()
		if !ok {
			return false
		}
		t.others = append(t.others, id)
	}
	return true
}

func (t *importTrial) args() []string { return []string{"import", "--keep-id", t.o.tmpl.big} }

func (t *importTrial) check(killed bool, res cmdResult) string {
	r, id := t.r, t.o.tmpl.bigID
	ids, ok := t.listIDs("after the killed import")
	if !ok {
		return ""
	}
	for _, o := range t.others {
		if !ids[o] {
			r.failf("session %s, there before the import, is not listed after it", o)
		}
	}
	land := opBefore
	if ids[id] {
		land = opComplete
		t.checkComplete(id)
	} else if files := t.sessionFiles(id); len(files) > 0 {
		// Allowed while a retry takes the id over: the session is absent.
		land = opPartial
		r.advisories = append(r.advisories, "a killed import left unlisted files for the retry to reuse")
	}
	c := t.kandev(cmdTimeout, "import", "--keep-id", t.o.tmpl.big)
	switch {
	case ids[id] && c.code != 3:
		r.failf("import --keep-id again of a complete import: %s, want exit 3 (id taken)", c.brief())
	case !ids[id] && c.code != 0:
		r.failf("import --keep-id after the killed import: %s, want exit 0", c.brief())
	case !ids[id]:
		t.checkComplete(id)
	}
	return land
}

// checkComplete: the imported session's log holds every event of the bundle.
func (t *importTrial) checkComplete(id string) {
	l, ok := t.cleanLog(id, "of the imported session")
	if ok && len(l.lines) != t.o.tmpl.bigEvents {
		t.r.failf("imported session %s has %d events, the bundle %d", id, len(l.lines), t.o.tmpl.bigEvents)
	}
}

// pruneTrial: prune among finished and idle sessions. Killed, each finished
// session is gone entirely or intact; idle ones are untouched; a retry
// finishes the job.
type pruneTrial struct {
	*runEnv
	done, idle []string
}

func (t *pruneTrial) prepare() bool {
	for i := 0; i < t.p.opSessions; i++ {
		id, ok := t.importSmall()
		if !ok {
			return false
		}
		if i%3 == 2 {
			t.idle = append(t.idle, id)
			continue
		}
		if c := t.kandev(cmdTimeout, "done", id); c.code != 0 {
			t.r.failf("setup: done %s: %s", id, c.brief())
			return false
		}
		t.done = append(t.done, id)
	}
	return true
}

func (t *pruneTrial) args() []string { return []string{"prune"} }

func (t *pruneTrial) check(killed bool, res cmdResult) string {
	r := t.r
	ids, ok := t.listIDs("after the killed prune")
	if !ok {
		return ""
	}
	for _, id := range t.idle {
		if !ids[id] {
			r.failf("idle session %s is not listed after prune", id)
		}
		t.cleanLog(id, "of an idle session after prune")
	}
	gone := 0
	for _, id := range t.done {
		if ids[id] {
			t.cleanLog(id, "of a finished session prune kept")
			continue
		}
		gone++
		if files := t.sessionFiles(id); len(files) > 0 {
			r.failf("pruned session %s is not listed but left %v", id, files)
		}
	}
	if c := t.kandev(cmdTimeout, "prune"); c.code != 0 {
		r.failf("prune again: %s", c.brief())
	}
	for _, id := range t.done {
		if files := t.sessionFiles(id); len(files) > 0 {
			r.failf("finished session %s still has %v after prune ran again", id, files)
		}
	}
	switch gone {
	case 0:
		return opBefore
	case len(t.done):
		return opComplete
	}
	return opPartial
}

// interruptTrial: repair or stop of a session whose turn a SIGKILL left
// open at a tool call (sometimes with a torn last line). Killed, the log is
// readable, and the next resume continues it exactly once, or never when the
// stop took effect.
type interruptTrial struct {
	*runEnv
	id   string
	open []string
	l0   *sessionLog
}

func (t *interruptTrial) prepare() bool {
	sub := *t.runEnv
	// A read asks no permission, so the open turn pauses nothing.
	sub.p = &plan{idx: t.p.idx, kind: kindTurn, signal: sigKill, scen: findScenario("read"), killEvent: evToolCall}
	ki := sub.killedRun([]string{"--json", "start", "/say preparing\n/read notes.txt\n/say read it"})
	if len(ki.printed) == 0 || !ki.killed {
		t.r.failf("setup: the turn to interrupt was not killed at its tool call (%d events printed)", len(ki.printed))
		return false
	}
	var e event
	jsonUnmarshal(ki.printed[0], &e)
	t.id = e.SessionID
	waitNoAgents(t.cwd, 2*time.Second)
	if t.p.opSessions%2 == 0 {
		f, err := os.OpenFile(t.logPath(t.id), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			f.WriteString(`{"seq":999,"type":"agent_mess`)
			f.Close()
		}
	}
	l, err := readLog(t.logPath(t.id), t.id)
	if err != nil || len(l.probs) > 0 {
		t.r.failf("setup: log of the interrupted session: %v %v", err, l.probs)
		return false
	}
	ts := turns(l.events())
	if len(ts) == 0 || ts[len(ts)-1].ended {
		t.r.failf("setup: the prepared turn is not open")
		return false
	}
	t.l0, t.open = l, ts[len(ts)-1].unresolvedCalls()
	t.r.sessionID = t.id
	return true
}

func (t *interruptTrial) args() []string { return []string{t.p.kind, t.id} }

func (t *interruptTrial) check(killed bool, res cmdResult) string {
	r := t.r
	ids, ok := t.listIDs("after the killed " + t.p.kind)
	if !ok {
		return ""
	}
	if !ids[t.id] {
		r.failf("session %s is not listed after the killed %s", t.id, t.p.kind)
	}
	l1, err := readLog(t.logPath(t.id), t.id)
	if err != nil {
		r.failf("reading the log: %v", err)
		return ""
	}
	for _, pr := range l1.probs {
		r.failf("log after the killed %s: %s", t.p.kind, pr)
	}
	last := turns(l1.events())
	turn := last[len(last)-1]
	stopped := t.p.kind == kindStop && (!killed || recordStopped(filepath.Join(t.home, "sessions", t.id+".json")) ||
		turn.ended && turn.stopReason == "user_canceled")
	land := opBefore
	switch {
	case turn.ended && (t.p.kind == kindRepair || stopped && recordStopped(filepath.Join(t.home, "sessions", t.id+".json"))):
		land = opComplete
	case len(l1.lines) > len(t.l0.lines) || l1.torn == nil && t.l0.torn != nil || stopped:
		land = opPartial
	}
	t.resumeAfter(stopped)
	return land
}

// resumeAfter: resume continues the turn exactly once, or never after a
// stop that took effect; each open tool call got one unknown result.
func (t *interruptTrial) resumeAfter(stopped bool) {
	r := t.r
	res := t.kandev(cmdTimeout, "--json", "resume", t.id)
	t.save("resume1.out", res.stdout+"\n--- stderr (exit "+fmt.Sprint(res.code)+")\n"+res.stderr)
	if res.code != 0 && !(stopped && res.code == 5) {
		r.failf("resume after the killed %s: %s", t.p.kind, res.brief())
		return
	}
	l, ok := t.cleanLog(t.id, "after resume")
	if !ok {
		return
	}
	t.checkAppendOnly(&sessionLog{lines: t.l0.lines}, l, "the "+t.p.kind+" and resume")
	want := 1
	if stopped {
		want = 0
	}
	ts := turns(l.events())
	conts := 0
	for _, u := range ts {
		if u.source == "continuation" {
			conts++
		}
		if !u.ended {
			r.failf("turn %s still open after resume", u.id)
		}
	}
	r.continuations = conts
	if conts != want {
		r.failf("%d continuation(s) after the killed %s (stop took effect: %v), want %d", conts, t.p.kind, stopped, want)
	}
	unknown := map[string]int{}
	for _, e := range l.events() {
		if e.Type == "tool_result" && e.ToolStatus == "unknown" {
			unknown[e.ToolCallID]++
		}
	}
	for _, c := range t.open {
		if unknown[c] != 1 {
			r.failf("open tool call %s got %d unknown-outcome results, want 1", c, unknown[c])
		}
	}
	r.outcome = outNone
	if conts > 0 {
		r.outcome = outContinued
	}
}

// recordStopped reads `stopped` from a session record.
func recordStopped(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var rec struct {
		Stopped bool `json:"stopped"`
	}
	return jsonUnmarshal(b, &rec) == nil && rec.Stopped
}
