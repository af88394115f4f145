//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Where a SIGKILL inside an operation landed, read from the home it left.
const (
	opBefore   = "no-effect" // nothing the operation writes had changed
	opPartial  = "partial"   // some of it had happened
	opComplete = "complete"  // all of it had happened, kandev not yet exited
)

var opLandOrder = []string{opBefore, opPartial, opComplete, landExited}

// templates are the bundles the operations are prepared from, made once.
type templates struct {
	small, big string // export bundles: one short turn; one long turn
	bigID      string
	bigEvents  int
}

// runOp is one operation trial: prepare sessions, SIGKILL kandev inside the
// operation at the planned fraction of its calibrated duration (never, when
// calibrating), check the home.
func (x *runEnv) runOp() time.Duration {
	var op opTrial
	switch x.p.kind {
	case kindImport:
		op = &importTrial{runEnv: x}
	case kindPrune:
		op = &pruneTrial{runEnv: x}
	case kindACPLoad:
		op = &acpLoadTrial{interruptTrial{runEnv: x}}
	case kindApprove:
		op = &approveTrial{runEnv: x}
	case kindTrust:
		op = &trustTrial{remoteRig{runEnv: x}}
	case kindPull:
		op = &pullTrial{remoteRig: remoteRig{runEnv: x}}
	case kindClaimRelease:
		op = &claimReleaseTrial{remoteRig: remoteRig{runEnv: x}}
	default:
		op = &interruptTrial{runEnv: x}
	}
	if !op.prepare() {
		return 0
	}
	args := op.args()
	if in, ok := op.(interface{ stdin() string }); ok {
		x.stdin = in.stdin()
	}
	delay := time.Duration(-1)
	if d, ok := x.o.calib[x.p.kind]; ok {
		delay = time.Duration(x.p.opFrac * float64(d))
	}
	var res cmdResult
	var killed bool
	if fp, ok := op.(interface{ failpoint() string }); ok {
		res, killed = x.killAtFailpoint(fp.failpoint(), args...)
	} else {
		res, killed = x.killAfter(delay, args...)
	}
	x.save("op.out", res.stdout+"\n--- stderr (exit "+fmt.Sprint(res.code)+")\n"+res.stderr)
	x.r.exitCode, x.r.kill.killed, x.r.kill.at = res.code, killed, delay
	if !killed && res.code != 0 {
		x.r.failf("%s (not killed): %s", x.p.kind, res.brief())
	}
	x.r.land = op.check(killed, res)
	if !killed {
		x.r.land = landExited
	}
	x.checkDoctor()
	return res.dur
}

// opTrial is one kind of operation trial.
type opTrial interface {
	prepare() bool
	args() []string
	// check inspects the home after the operation (killed or not) and
	// returns where the kill landed.
	check(killed bool, res cmdResult) string
}

// killAfter runs kandev and SIGKILLs it after d (never when d < 0).
func (x *runEnv) killAfter(d time.Duration, args ...string) (cmdResult, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.o.kandev, args...)
	cmd.Dir, cmd.Env = x.cwd, x.env
	cmd.Stdin = strings.NewReader(x.stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return cmdResult{code: -1, stderr: err.Error()}, false
	}
	t0 := time.Now() // the kill delay and the duration both count from here

	if d >= 0 {
		timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	killed := false
	r := cmdResult{stdout: out.String(), stderr: errb.String(), dur: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, err.Error()
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		killed = ws.Signal() == syscall.SIGKILL
		r.code = 128 + int(ws.Signal())
	}
	return r, killed
}

// listIDs is kandev --json list as a set of ids; it must parse.
func (x *runEnv) listIDs(when string) (map[string]bool, bool) {
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	c := x.kandev(cmdTimeout, "--json", "list")
	if c.code != 0 || json.Unmarshal([]byte(c.stdout), &list) != nil {
		x.r.failf("kandev --json list %s: %s", when, c.brief())
		return nil, false
	}
	ids := map[string]bool{}
	for _, s := range list.Sessions {
		ids[s.ID] = true
	}
	return ids, true
}

// importSmall imports the small template bundle under a new id.
func (x *runEnv) importSmall() (string, bool) {
	c := x.kandev(cmdTimeout, "import", x.o.tmpl.small)
	id := strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	if c.code != 0 || id == "" {
		x.r.failf("setup: import: %s", c.brief())
		return "", false
	}
	return id, true
}

// sessionFiles lists the files the home holds for session id.
func (x *runEnv) sessionFiles(id string) []string {
	m, _ := filepath.Glob(filepath.Join(x.home, "sessions", id+".*"))
	var out []string
	for _, f := range m {
		if !strings.HasSuffix(f, ".lock") { // lock files hold no data and block nothing
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

// checkDoctor: doctor finds no corruption; a torn tail is the one problem a
// crash may leave, and repair fixes it.
func (x *runEnv) checkDoctor() {
	torn := x.doctorProblems("after the kill")
	for _, id := range torn {
		if c := x.kandev(cmdTimeout, "repair", id); c.code != 0 {
			x.r.failf("repair of the torn log of %s: %s", id, c.brief())
		}
	}
	if len(torn) > 0 {
		if again := x.doctorProblems("after repair"); len(again) > 0 {
			x.r.failf("doctor still reports torn logs %v after repair", again)
		}
	}
}

// doctorProblems fails on any session problem doctor reports other than a
// torn tail, an interrupted turn or a paused continuation; it returns the
// sessions with a torn tail.
func (x *runEnv) doctorProblems(when string) []string {
	c := x.kandev(cmdTimeout, "--json", "doctor")
	var d struct {
		Checks []struct {
			Name    string `json:"name"`
			OK      bool   `json:"ok"`
			Message string `json:"message"`
		} `json:"checks"`
	}
	if json.Unmarshal([]byte(c.stdout), &d) != nil {
		x.r.failf("kandev --json doctor %s: %s", when, c.brief())
		return nil
	}
	var torn []string
	for _, ch := range d.Checks {
		id, isSession := strings.CutPrefix(ch.Name, "session ")
		switch {
		case ch.OK || strings.HasPrefix(ch.Name, "agent ") || ch.Name == "git":
		case isSession && strings.Contains(ch.Message, "torn line"):
			torn = append(torn, id)
		case isSession && (strings.HasPrefix(ch.Message, "interrupted") || strings.HasPrefix(ch.Message, "automatic continuation paused")):
		default:
			x.r.failf("doctor %s: %s: %s", when, ch.Name, ch.Message)
		}
	}
	return torn
}
