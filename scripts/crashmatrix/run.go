package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var jsonUnmarshal = json.Unmarshal

// Where the kill landed, read from the log it left (plus whether kandev was
// still alive).
const (
	landNoSession  = "no-session"       // start: killed before the session record existed
	landBeforeTurn = "before-turn"      // the killed command began no turn
	landUnaccepted = "turn-unaccepted"  // a turn began, the agent had sent nothing in it
	landMidTurn    = "mid-turn"         // agent output streamed, no tool call open
	landToolOpen   = "tool-call-open"   // a tool call without a result
	landPermission = "permission-open"  // a permission request without an answer
	landAfterEnd   = "after-turn-ended" // the turn had ended, kandev still alive
	landExited     = "exited-by-itself" // kandev had finished before the kill point
)

var landOrder = []string{landNoSession, landBeforeTurn, landUnaccepted, landMidTurn, landToolOpen, landPermission, landAfterEnd, landExited}

// Outcomes of the first resume.
const (
	outNone          = "nothing-to-do"
	outContinued     = "continued"
	outPaused        = "paused"
	outInitialResent = "initial-resent"
	outMessageResent = "message-resent"
	outNoSession     = "no-session"
)

type runResult struct {
	p             *plan
	dir           string
	sessionID     string
	land          string
	outcome       string
	fails         []string
	advisories    []string
	resumeDur     time.Duration // the whole first resume
	restoreDur    time.Duration // until it printed agent_started (agent relaunched and restored)
	continuations int
	kill          killInfo
	tornBefore    bool
	staleAgents   int
	preBadge      string
	preReason     string
	elapsed       time.Duration
}

func (r *runResult) pass() bool { return len(r.fails) == 0 }

func (r *runResult) failf(format string, a ...any) {
	r.fails = append(r.fails, fmt.Sprintf(format, a...))
}

func (r *runResult) line() string {
	s := fmt.Sprintf("%s | landed %s, %s", r.p.describe(), r.land, r.outcome)
	if r.sessionID != "" {
		s += " | session " + r.sessionID
	}
	if !r.pass() {
		s += " | " + strings.Join(r.fails, "; ")
		s += " | kept: " + r.dir
	} else {
		s += fmt.Sprintf(" | ok (resume %dms)", r.resumeDur.Milliseconds())
	}
	if len(r.advisories) > 0 {
		s += " | advisory: " + strings.Join(r.advisories, "; ")
	}
	return s
}

type runEnv struct {
	o    *options
	p    *plan
	r    *runResult
	dir  string
	home string
	cwd  string
	env  []string
}

const cmdTimeout = 60 * time.Second

func execute(o *options, p *plan) *runResult {
	t0 := time.Now()
	r := &runResult{p: p, outcome: "aborted"}
	x := &runEnv{o: o, p: p, r: r, dir: filepath.Join(o.dir, fmt.Sprintf("run-%03d", p.idx))}
	r.dir = x.dir
	x.home = filepath.Join(x.dir, "home")
	x.cwd = filepath.Join(x.dir, "cwd")
	os.RemoveAll(x.dir)
	for _, d := range []string{x.home, x.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r.failf("setup: %v", err)
			return r
		}
	}
	if c, err := filepath.EvalSymlinks(x.cwd); err == nil {
		x.cwd = c
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KANDEV_") && !strings.HasPrefix(kv, "SHELL=") {
			x.env = append(x.env, kv)
		}
	}
	x.env = append(x.env, "KANDEV_HOME="+x.home, "NO_COLOR=1", "SHELL=/bin/sh")
	os.WriteFile(filepath.Join(x.home, "config.toml"), []byte(p.configTOML(o.kandev)), 0o644)
	os.WriteFile(filepath.Join(x.cwd, "notes.txt"), []byte("notes for the crash matrix\n"), 0o644)
	os.WriteFile(filepath.Join(x.dir, "plan.txt"), []byte(p.describe()+"\nprompt:\n"+p.prompt+"\n"), 0o644)

	x.run()

	r.elapsed = time.Since(t0)
	if left := demoAgents(x.cwd); len(left) > 0 {
		r.failf("demo-agent process(es) %v of this run still alive at the end", left)
		for _, pid := range left {
			killPid(pid)
		}
	}
	if r.pass() && !o.keep {
		os.RemoveAll(x.dir)
	}
	return r
}

func (x *runEnv) logPath(id string) string {
	return filepath.Join(x.home, "sessions", id+".jsonl")
}

type statusOut struct {
	Session struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		ResumeToken string `json:"resume_token"`
	} `json:"session"`
	Status struct {
		NeedsResume bool   `json:"needs_resume"`
		IsResumable bool   `json:"is_resumable"`
		Reason      string `json:"reason"`
		Badge       string `json:"badge"`
		OwnerPID    int    `json:"owner_pid"`
		Interrupted bool   `json:"interrupted"`
		Paused      string `json:"paused"`
	} `json:"status"`
}

// withPerms gives a command the killed command's permission mode: a turn
// interrupted under one mode is not continued under another.
func (x *runEnv) withPerms(args ...string) []string {
	if x.p.scen.perms == "" {
		return args
	}
	return append([]string{"--permissions", x.p.scen.perms}, args...)
}

func (x *runEnv) status(id string) (*statusOut, bool) {
	c := x.kandev(cmdTimeout, x.withPerms("--json", "status", id)...)
	var st statusOut
	if c.code != 0 || json.Unmarshal([]byte(c.stdout), &st) != nil {
		x.r.failf("kandev --json status %s: %s", id, c.brief())
		return nil, false
	}
	return &st, true
}

// run is one run: set up, kill, inspect, resume twice, prompt, check.
func (x *runEnv) run() {
	r, p := x.r, x.p

	// 1. The session: an idle one for `prompt`, none yet for `start`.
	id := ""
	pre := 0 // events in the log before the killed command
	if p.mode == "prompt" {
		c := x.kandev(cmdTimeout, "start")
		id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
		if c.code != 0 || id == "" {
			r.failf("setup: kandev start (no prompt): %s", c.brief())
			return
		}
		l, err := readLog(x.logPath(id), id)
		if err != nil || len(l.probs) > 0 || l.torn != nil {
			r.failf("setup: log of the idle session is not clean: %v %v", err, l.probs)
			return
		}
		pre = len(l.lines)
	}

	// 2. The killed command.
	args := []string{"--json"}
	if p.scen.perms != "" {
		args = append(args, "--permissions", p.scen.perms)
	}
	if p.mode == "start" {
		args = append(args, "start", p.prompt)
	} else {
		args = append(args, "prompt", id, p.prompt)
	}
	ki := x.killedRun(args)
	r.kill = ki
	if ki.err != "" {
		r.failf("running the killed command: %s", ki.err)
		return
	}
	var printed []event
	for _, raw := range ki.printed {
		var e event
		json.Unmarshal(raw, &e)
		printed = append(printed, e)
	}
	if id == "" && len(printed) > 0 {
		id = printed[0].SessionID
	}
	// The killed owner's agent dies with it (Pdeathsig); give the kernel a moment.
	stale := waitNoAgents(x.cwd, 2*time.Second)
	r.staleAgents = len(stale)

	// 3. Which session? A start killed before printing anything: ask list.
	var list struct {
		Sessions []struct {
			ID    string `json:"id"`
			Badge string `json:"badge"`
		} `json:"sessions"`
	}
	lc := x.kandev(cmdTimeout, "--json", "list")
	if lc.code != 0 || json.Unmarshal([]byte(lc.stdout), &list) != nil {
		r.failf("kandev --json list after the kill: %s", lc.brief())
		return
	}
	if id == "" {
		switch len(list.Sessions) {
		case 0:
			r.land, r.outcome = landNoSession, outNoSession
			x.checkNoSession()
			return
		case 1:
			id = list.Sessions[0].ID
		default:
			r.failf("start killed before printing: list shows %d sessions, want at most 1", len(list.Sessions))
			return
		}
	} else if len(list.Sessions) != 1 || list.Sessions[0].ID != id {
		r.failf("list after the kill shows %d session(s), want exactly %s", len(list.Sessions), id)
	}
	r.sessionID = id

	// 4. The log as the crash left it.
	l0, err := readLog(x.logPath(id), id)
	if err != nil {
		r.failf("reading the log: %v", err)
		return
	}
	for _, pr := range l0.probs {
		r.failf("log after the kill: %s", pr)
	}
	r.tornBefore = l0.torn != nil
	// Kept for inspection if the run fails.
	copyFile(x.logPath(id), filepath.Join(x.dir, "log-after-kill.jsonl"))
	copyFile(filepath.Join(x.home, "sessions", id+".json"), filepath.Join(x.dir, "record-after-kill.json"))
	x.save("printed-before-kill.jsonl", string(joinLines(ki.printed)))
	x.checkAcknowledged(ki.printed, l0, "after the kill")
	ev0 := l0.events()
	ts0 := turns(ev0)
	var last *turnInfo
	if n := len(ts0); n > 0 && ts0[n-1].startIdx >= pre {
		last = ts0[n-1]
	}
	for _, t := range ts0 {
		if t != last && !t.ended {
			r.failf("turn %s (not the killed one) has no turn_ended", t.id)
		}
	}
	interrupted := last != nil && !last.ended
	// kandev marks a permission pending in the record before it logs the
	// question and clears it after the answer is logged: either one open
	// means the question may have been unanswered when the owner died.
	permOpen := interrupted && (last.pendingPermission() || recordPermissionPending(filepath.Join(x.home, "sessions", id+".json")))
	switch {
	case !ki.killed:
		r.land = landExited
	case last == nil:
		r.land = landBeforeTurn
	case last.ended:
		r.land = landAfterEnd
	case permOpen:
		r.land = landPermission
	case len(last.openCalls()) > 0:
		r.land = landToolOpen
	case last.agentEvents == 0:
		r.land = landUnaccepted
	default:
		r.land = landMidTurn
	}
	if !ki.killed && ki.exitCode != 0 {
		r.failf("kandev exited by itself with code %d before the kill point", ki.exitCode)
	}
	if !ki.killed && interrupted {
		r.failf("kandev exited by itself (no kill) but left turn %s open", last.id)
	}

	// Expectations, from the log (the truth) alone.
	initialResend := p.mode == "start" && (last == nil || (interrupted && last.source == "initial" && last.agentEvents == 0))
	pauseStrict := permOpen && p.scen.perms == "ask"
	pauseMaybe := permOpen && p.scen.perms != "ask" // auto-answered mode: the request was open only for an instant
	// A turn the agent never answered is sent again with its own message
	// (and source), not continued.
	resend := interrupted && !initialResend && last.agentEvents == 0 && !permOpen
	wantCont := 0
	if interrupted && !initialResend && !pauseStrict && !resend {
		wantCont = 1
	}

	// 5. The verdict before resume.
	st, ok := x.status(id)
	if !ok {
		return
	}
	r.preBadge, r.preReason = st.Status.Badge, st.Status.Reason
	if st.Status.Reason == "agent_running" || st.Status.OwnerPID != 0 {
		r.failf("status says the owner is alive after SIGKILL: reason %s owner_pid %d", st.Status.Reason, st.Status.OwnerPID)
	}
	switch {
	case last == nil:
		okBadge := st.Status.Badge == "idle" || (p.mode == "start" && st.Status.Badge == "needs-resume")
		if !okBadge {
			r.failf("status before resume: badge %q, want idle (no turn began)", st.Status.Badge)
		}
	case interrupted:
		if st.Status.Badge != "needs-resume" && !(permOpen && st.Status.Badge == "paused") {
			r.failf("status before resume: badge %q, want needs-resume (turn %s has no turn_ended)", st.Status.Badge, last.id)
		}
		if !st.Status.Interrupted {
			r.failf("status before resume: interrupted=false for open turn %s", last.id)
		}
	default:
		if st.Status.Badge != "idle" {
			r.failf("status before resume: badge %q, want idle (turn %s ended with %s)", st.Status.Badge, last.id, last.stopReason)
		}
		if st.Status.Interrupted {
			r.failf("status before resume: interrupted=true although turn %s ended", last.id)
		}
	}
	if len(stale) > 0 && st.Status.Reason != "stale_execution" && aliveAny(stale) {
		r.failf("agent %v of the dead owner alive but status reason is %s, want stale_execution", stale, st.Status.Reason)
	}

	// 6. The first resume.
	res, restored := x.kandevStream(cmdTimeout, `"type":"agent_started"`, x.withPerms("--json", "resume", id)...)
	r.resumeDur, r.restoreDur = res.dur, restored
	x.save("resume1.out", res.stdout+"\n--- stderr (exit "+fmt.Sprint(res.code)+")\n"+res.stderr)
	paused := false
	switch {
	case res.timedOut:
		r.failf("resume timed out")
		return
	case res.code == 5 && (pauseStrict || pauseMaybe):
		paused = true
		low := strings.ToLower(res.stderr + res.stdout)
		if !strings.Contains(low, "permission") {
			r.failf("resume exit 5 without saying a permission was pending: %s", res.brief())
		}
	case res.code == 0 && !pauseStrict:
		if pauseMaybe {
			wantCont = 1
			r.advisories = append(r.advisories, "log shows an unanswered "+p.scen.perms+" permission request, kandev continued instead of pausing")
		}
	case pauseStrict && res.code == 0:
		// Keep checking the rest against what kandev did (it continued).
		r.failf("resume: exit 0 and continued, want exit 5 (turn %s has an unanswered permission request in the log)", last.id)
		wantCont = 1
	case pauseStrict:
		r.failf("resume: %s, want exit 5 (a permission request was pending)", res.brief())
		return
	default:
		r.failf("resume: %s, want exit 0", res.brief())
		return
	}
	if paused {
		wantCont = 0
	}
	l1, ok := x.cleanLog(id, "after resume")
	if !ok {
		return
	}
	x.checkAppendOnly(l0, l1, "resume")
	x.checkAcknowledged(ki.printed, l1, "after resume")
	ev1 := l1.events()
	added := ev1[len(l0.lines):]
	newTurns := turns(added)
	conts, initials, others, resent := 0, 0, 0, 0
	for _, t := range newTurns {
		switch {
		case resend && resent == 0 && t.source != "continuation" && t.source != "initial":
			resent++
			if t.userText != last.userText {
				r.failf("re-sent turn's message differs: %.60q, want %.60q", t.userText, last.userText)
			}
			continue
		}
		switch t.source {
		case "continuation":
			conts++
		case "initial":
			initials++
			if t.userText != p.prompt {
				r.failf("re-sent initial prompt differs: %.60q", t.userText)
			}
		default:
			others++
		}
		if !t.ended || t.stopReason != "end_turn" {
			r.failf("resumed turn %s (%s) ended=%v stop_reason %q, want end_turn", t.id, t.source, t.ended, t.stopReason)
		}
	}
	r.continuations = conts
	if conts != wantCont {
		r.failf("%d continuation turn(s) after resume, want %d (landed %s)", conts, wantCont, r.land)
	}
	wantInit := 0
	if initialResend && !paused {
		wantInit = 1
	}
	if initials != wantInit {
		r.failf("%d re-sent initial prompt turn(s), want %d (landed %s)", initials, wantInit, r.land)
	}
	if others != 0 {
		r.failf("resume ran %d turn(s) of another source", others)
	}
	if resend && !paused && resent != 1 {
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

	// Repair: the interrupted turn closed with shutdown; open tool calls get unknown results.
	all1 := turns(ev1)
	if interrupted {
		var t *turnInfo
		for _, u := range all1 {
			if u.id == last.id {
				t = u
			}
		}
		if t == nil || !t.ended || t.stopReason != "shutdown" {
			r.failf("interrupted turn %s not closed with stop_reason shutdown", last.id)
		}
		open := last.openCalls()
		for _, c := range open {
			if t == nil || !t.unknown[c] {
				r.failf("tool call %s of interrupted turn %s got no tool_result with tool_status unknown", c, last.id)
			}
		}
		if t != nil && len(t.unknown) != len(open) {
			r.failf("%d unknown-outcome tool results for %d open tool calls", len(t.unknown), len(open))
		}
	}
	for _, t := range all1 {
		if !t.ended {
			r.failf("turn %s still open after resume", t.id)
		}
		for _, c := range t.calls {
			if !t.results[c] {
				r.failf("tool call %s of turn %s has no tool_result after resume", c, t.id)
			}
		}
		if (last == nil || t.id != last.id || !interrupted) && len(t.unknown) > 0 {
			r.failf("turn %s (not interrupted) got unknown-outcome results", t.id)
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

	// Verdict after resume.
	st1, ok := x.status(id)
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
	x.checkAgentMemory(st1.Session.ResumeToken, all1, pre)

	// 7. A second resume changes nothing that matters.
	res2 := x.kandev(cmdTimeout, x.withPerms("resume", id)...)
	x.save("resume2.out", res2.stdout+"\n--- stderr (exit "+fmt.Sprint(res2.code)+")\n"+res2.stderr)
	if res2.code != res.code {
		r.failf("second resume: %s, want exit %d like the first", res2.brief(), res.code)
	}
	l2, ok := x.cleanLog(id, "after the second resume")
	if !ok {
		return
	}
	x.checkAppendOnly(l1, l2, "second resume")
	if n := len(turns(l2.events()[len(l1.lines):])); n != 0 {
		r.failf("second resume started %d turn(s)", n)
	}

	// 8. A later prompt works (after a pause too), with no extra continuation.
	pc := x.kandev(cmdTimeout, x.withPerms("prompt", id, "final check")...)
	if pc.code != 0 {
		r.failf("prompt after recovery: %s", pc.brief())
		return
	}
	l3, ok := x.cleanLog(id, "after the final prompt")
	if !ok {
		return
	}
	x.checkAppendOnly(l2, l3, "final prompt")
	nt := turns(l3.events()[len(l2.lines):])
	if len(nt) != 1 || nt[0].source != "user" || !nt[0].ended || nt[0].stopReason != "end_turn" {
		desc := []string{}
		for _, t := range nt {
			desc = append(desc, fmt.Sprintf("%s/%s/%s", t.id, t.source, t.stopReason))
		}
		r.failf("final prompt ran turns %v, want one user turn ending end_turn", desc)
	}
	total := 0
	for _, t := range turns(l3.events()) {
		if t.source == "continuation" {
			total++
		}
	}
	if total != wantCont {
		r.failf("%d continuation(s) in the final log, want %d", total, wantCont)
	}
	if st3, ok := x.status(id); ok && st3.Status.Badge != "idle" {
		r.failf("status after the final prompt: badge %q, want idle", st3.Status.Badge)
	}
}

// cleanLog reads the log and requires it intact: no torn line, no gap.
func (x *runEnv) cleanLog(id, when string) (*sessionLog, bool) {
	l, err := readLog(x.logPath(id), id)
	if err != nil {
		x.r.failf("reading the log %s: %v", when, err)
		return nil, false
	}
	for _, pr := range l.probs {
		x.r.failf("log %s: %s", when, pr)
	}
	if l.torn != nil {
		x.r.failf("log %s ends with a torn line: %.60q", when, l.torn)
	}
	return l, len(l.probs) == 0 && l.torn == nil
}

// checkAcknowledged: every event kandev printed is in the log, byte for byte.
func (x *runEnv) checkAcknowledged(printed [][]byte, l *sessionLog, when string) {
	for _, raw := range printed {
		var e event
		json.Unmarshal(raw, &e)
		i := int(e.Seq) - 1
		if i < 0 || i >= len(l.lines) {
			x.r.failf("acknowledged event seq %d (%s) missing from the log %s", e.Seq, e.Type, when)
			continue
		}
		if string(l.lines[i].raw) != string(raw) {
			x.r.failf("acknowledged event seq %d (%s) changed in the log %s", e.Seq, e.Type, when)
		}
	}
}

// checkAppendOnly: the older log's complete lines are a prefix of the newer one.
func (x *runEnv) checkAppendOnly(old, cur *sessionLog, step string) {
	if len(cur.lines) < len(old.lines) {
		x.r.failf("%s shortened the log from %d to %d lines", step, len(old.lines), len(cur.lines))
		return
	}
	for i := range old.lines {
		if string(old.lines[i].raw) != string(cur.lines[i].raw) {
			x.r.failf("%s rewrote log line %d", step, i+1)
			return
		}
	}
}

// checkNoSession: a start killed before its record existed leaves nothing
// half-made behind.
func (x *runEnv) checkNoSession() {
	ents, _ := os.ReadDir(filepath.Join(x.home, "sessions"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".json") {
			x.r.failf("list is empty but %s exists", e.Name())
		}
	}
	c := x.kandev(cmdTimeout, "--json", "list", "--resumable")
	if c.code != 0 || !strings.Contains(c.stdout, `"sessions":[]`) {
		x.r.failf("list --resumable with no session: %s", c.brief())
	}
	if c := x.kandev(cmdTimeout, "resume", "--latest"); c.code != 2 && c.code != 4 {
		x.r.failf("resume --latest with no session: %s, want exit 2 or 4", c.brief())
	}
}

// checkAgentMemory (advisory): after resume the agent's own conversation
// holds every user prompt kandev acknowledged in the killed command's turns,
// so nothing the user was told was sent is silently lost for the agent.
func (x *runEnv) checkAgentMemory(token string, all []*turnInfo, pre int) {
	if token == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(x.home, "demo-agent", token+".json"))
	if err != nil {
		return
	}
	var f struct {
		Entries []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"entries"`
	}
	if json.Unmarshal(b, &f) != nil {
		return
	}
	var users strings.Builder
	for _, e := range f.Entries {
		if e.Role == "user" {
			users.WriteString(e.Text)
			users.WriteByte('\n')
		}
	}
	for _, t := range all {
		if t.startIdx < pre || (t.source != "user" && t.source != "initial") || t.userText == "" {
			continue
		}
		if !strings.Contains(users.String(), t.userText) {
			msg := fmt.Sprintf("the agent never received the acknowledged %s prompt of turn %s (kandev printed turn_started/user_message for it)", t.source, t.id)
			if x.o.strict {
				x.r.failf("%s", msg)
			} else {
				x.r.advisories = append(x.r.advisories, msg)
			}
		}
	}
}

func (x *runEnv) save(name, content string) {
	os.WriteFile(filepath.Join(x.dir, name), []byte(content), 0o644)
}

func copyFile(from, to string) {
	if b, err := os.ReadFile(from); err == nil {
		os.WriteFile(to, b, 0o644)
	}
}

func joinLines(ls [][]byte) []byte {
	var b []byte
	for _, l := range ls {
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

func aliveAny(pids []int) bool {
	for _, p := range pids {
		if aliveNotZombie(p) {
			return true
		}
	}
	return false
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// recordPermissionPending reads permission_pending from a session record.
func recordPermissionPending(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var rec struct {
		PermissionPending bool `json:"permission_pending"`
	}
	return json.Unmarshal(b, &rec) == nil && rec.PermissionPending
}
