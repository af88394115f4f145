//go:build unix

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
	lastEvent     string // the last event kandev printed before the signal ("" none)
	exitCode      int    // of the signalled command
	stopDur       time.Duration
	opDur         time.Duration // an operation's own run
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
	o     *options
	p     *plan
	r     *runResult
	dir   string
	home  string
	cwd   string
	env   []string
	fire  func(cause string) // sends the plan's signal (set by killedRun)
	stdin string             // what an operation trial's command reads (killAfter)
}

const cmdTimeout = 60 * time.Second

func execute(o *options, p *plan) *runResult {
	t0 := time.Now()
	r := &runResult{p: p, outcome: "aborted"}
	x, err := newRunEnv(o, p, r, fmt.Sprintf("run-%03d", p.idx))
	if err != nil {
		r.failf("setup: %v", err)
		return r
	}
	switch {
	case p.kind == kindTurn:
		x.runTurn()
	case p.kind == kindTwo:
		x.runTwo()
	case liveKinds[p.kind]:
		x.runLive()
	case defaultKinds[p.kind]:
		x.runDefault()
	default:
		r.opDur = x.runOp()
	}
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

// newRunEnv makes a run's directory: a fresh home with the plan's config
// and a cwd with notes.txt.
func newRunEnv(o *options, p *plan, r *runResult, name string) (*runEnv, error) {
	x := &runEnv{o: o, p: p, r: r, dir: filepath.Join(o.dir, name)}
	r.dir = x.dir
	x.home = filepath.Join(x.dir, "home")
	x.cwd = filepath.Join(x.dir, "cwd")
	os.RemoveAll(x.dir)
	for _, d := range []string{x.home, x.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if c, err := filepath.EvalSymlinks(x.cwd); err == nil {
		x.cwd = c
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KANDEV_") && !strings.HasPrefix(kv, "SHELL=") && !strings.HasPrefix(kv, "CI=") {
			x.env = append(x.env, kv)
		}
	}
	// CI=1: owners linger only where a trial says --linger (the default for
	// a person is 300 s), so a trial kills the owner it means to.
	x.env = append(x.env, "KANDEV_HOME="+x.home, "NO_COLOR=1", "SHELL=/bin/sh", "CI=1")
	os.WriteFile(filepath.Join(x.home, "config.toml"), []byte(p.configTOML(o.kandev)), 0o600)
	os.WriteFile(filepath.Join(x.cwd, "notes.txt"), []byte("notes for the crash matrix\n"), 0o644)
	os.WriteFile(filepath.Join(x.dir, "plan.txt"), []byte(p.describe()+"\nprompt:\n"+p.prompt+"\n"), 0o644)
	return x, nil
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
	if x.p.scen == nil || x.p.scen.perms == "" {
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
