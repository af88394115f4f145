//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Trials of live (detached) owners: a SIGKILL inside `kandev approve` of a
// parked permission request, of the detached owner while a request is
// parked, and of a warm owner around its linger's expiry.
const (
	kindApprove = "approve"
	kindParked  = "parked"
	kindExpiry  = "expiry"
)

// liveKinds kill a detached owner, not a command: they are not calibrated.
var liveKinds = map[string]bool{kindParked: true, kindExpiry: true}

// parkedWrites is the prompt of the approve and parked trials: two writes,
// each asked for separately under --permissions defer.
const parkedWrites = "/write A.txt a\n/write B.txt b"

// liveStatus is what the live trials read of kandev status.
type liveStatus struct {
	Status struct {
		Reason             string `json:"reason"`
		Badge              string `json:"badge"`
		OwnerPID           int    `json:"owner_pid"`
		PermissionRequests []struct {
			ID string `json:"request_id"`
		} `json:"permission_requests"`
	} `json:"status"`
}

func (x *runEnv) liveStatus(id string) liveStatus {
	var st liveStatus
	c := x.kandev(cmdTimeout, "--permissions", "defer", "--json", "status", id)
	if c.code != 0 || json.Unmarshal([]byte(c.stdout), &st) != nil {
		x.r.failf("kandev --json status %s: %s", id, c.brief())
	}
	return st
}

// parkWrite makes a session whose detached owner holds the first write
// parked; it returns the session and the request id.
func (x *runEnv) parkWrite() (id, rid string, ok bool) {
	c := x.kandev(cmdTimeout, "--permissions", "defer", "start", "--linger", "60s")
	id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	if c.code != 0 || id == "" {
		x.r.failf("setup: start --linger under defer: %s", c.brief())
		return "", "", false
	}
	x.r.sessionID = id
	if c := x.kandev(cmdTimeout, "--permissions", "defer", "prompt", id, parkedWrites); c.code != 7 {
		x.r.failf("setup: the first write did not park: %s", c.brief())
		return id, "", false
	}
	st := x.liveStatus(id)
	if len(st.Status.PermissionRequests) != 1 {
		x.r.failf("setup: status lists %d parked requests, want 1", len(st.Status.PermissionRequests))
		return id, "", false
	}
	return id, st.Status.PermissionRequests[0].ID, true
}

// resolutions are the permission_resolved lines of the log, by request id.
func (x *runEnv) resolutions(id string) map[string]resolution {
	out := map[string]resolution{}
	b, _ := os.ReadFile(x.logPath(id))
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Data      struct {
				Allowed    bool   `json:"allowed"`
				AnsweredBy string `json:"answered_by"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "permission_resolved" {
			out[e.RequestID] = resolution{allowed: e.Data.Allowed, by: e.Data.AnsweredBy}
		}
	}
	return out
}

type resolution struct {
	allowed bool
	by      string
}

func (x *runEnv) written(name string) bool {
	_, err := os.Stat(filepath.Join(x.cwd, name))
	return err == nil
}

// writtenSoon waits for the agent to write name after its request was
// approved (the write follows the answer).
func (x *runEnv) writtenSoon(name string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if x.written(name) {
			return true
		}
	}
	return false
}

// closeOwner ends the session's live owner and waits for it.
func (x *runEnv) closeOwner(id string) {
	if c := x.kandev(cmdTimeout, "close", "--now", id); c.code != 0 {
		x.r.failf("close --now: %s", c.brief())
	}
}

// approveTrial: SIGKILL inside `kandev approve` of the first of two parked
// writes. Whatever the kill point, the answer applies to that request or to
// none, and the second request, asked once the first is answered, stays
// parked: no answer reaches a request it was not given for.
type approveTrial struct {
	*runEnv
	id, rid string
}

func (t *approveTrial) prepare() bool {
	var ok bool
	t.id, t.rid, ok = t.parkWrite()
	return ok
}

func (t *approveTrial) args() []string { return []string{"approve", t.id} }

func (t *approveTrial) check(killed bool, res cmdResult) string {
	r := t.r
	// An answer queued before the kill is taken by the owner within moments.
	var got resolution
	answered := false
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !answered; time.Sleep(50 * time.Millisecond) {
		got, answered = t.resolutions(t.id)[t.rid]
	}
	land := opBefore
	switch {
	case !killed && (res.code != 0 || !answered):
		r.failf("approve (not killed): %s, request answered %v", res.brief(), answered)
	case answered && (!got.allowed || !strings.HasPrefix(got.by, "in-")):
		r.failf("request %s resolved allowed=%v by %q, want approved by the approve's inbox input", t.rid, got.allowed, got.by)
	case answered:
		land = opComplete
		if !t.writtenSoon("A.txt") {
			r.failf("request %s was approved but A.txt is not written", t.rid)
		}
	case t.written("A.txt"):
		r.failf("A.txt was written but request %s is not resolved", t.rid)
	}
	if answered {
		// The turn goes on to the second write, which must stay parked.
		time.Sleep(500 * time.Millisecond)
		for rid, res := range t.resolutions(t.id) {
			if rid != t.rid {
				r.failf("request %s, asked after the approve, was resolved (allowed=%v by %q) with no answer for it", rid, res.allowed, res.by)
			}
		}
		if t.written("B.txt") {
			r.failf("B.txt was written though nobody approved its request")
		}
		if c := t.kandev(cmdTimeout, "approve", t.id, "--request", t.rid); c.code != 4 {
			r.failf("approve of the request already answered: %s, want exit 4", c.brief())
		}
	} else if c := t.kandev(cmdTimeout, "approve", t.id, "--request", t.rid); c.code != 0 || !t.writtenSoon("A.txt") {
		r.failf("approve after the killed one: %s, A written %v", c.brief(), t.written("A.txt"))
	}
	t.closeOwner(t.id)
	waitNoAgents(t.cwd, 3*time.Second)
	return land
}

// runLive is a trial that SIGKILLs a detached owner: inside a parked
// permission request, or around a warm owner's expiry.
func (x *runEnv) runLive() {
	r := x.r
	rng := rngFor(x.o.seed, x.p.idx)
	switch x.p.kind {
	case kindParked:
		id, rid, ok := x.parkWrite()
		if !ok {
			return
		}
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		r.kill.killed = x.killOwner(id)
		r.land = landPermission
		x.checkParkedKilled(id, rid)
	case kindExpiry:
		c := x.kandev(cmdTimeout, "start", "--linger", "1s", "/say warm for a second")
		id := strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
		if c.code != 0 || id == "" {
			r.failf("setup: start --linger 1s: %s", c.brief())
			return
		}
		r.sessionID = id
		time.Sleep(time.Duration(200+rng.IntN(700)) * time.Millisecond) // the owner exits about 1 s after the turn ended
		r.land = landExited
		if x.killOwner(id) {
			r.kill.killed, r.land = true, landAfterEnd
		}
		x.checkExpiryKilled(id)
	}
}

// killOwner SIGKILLs the session's live owner; false when none ran.
func (x *runEnv) killOwner(id string) bool {
	pid := x.liveStatus(id).Status.OwnerPID
	if pid == 0 || syscall.Kill(pid, syscall.SIGKILL) != nil {
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if x.liveStatus(id).Status.Reason != "agent_running" {
			waitNoAgents(x.cwd, 2*time.Second)
			return true
		}
	}
	x.r.failf("the owner of %s is still alive 10 s after its SIGKILL", id)
	return true
}

// checkParkedKilled: the killed owner's parked request was never approved,
// the session pauses (a permission was pending), and the operator's prompt
// lifts the pause without continuing the cut-off turn.
func (x *runEnv) checkParkedKilled(id, rid string) {
	r := x.r
	if res, ok := x.resolutions(id)[rid]; ok && res.allowed {
		r.failf("the parked request %s was approved by nobody: %+v", rid, res)
	}
	if x.written("A.txt") || x.written("B.txt") {
		r.failf("a parked write happened although its owner was killed before any answer")
	}
	if c := x.kandev(cmdTimeout, "approve", id); c.code != 4 {
		r.failf("approve after the owner died: %s, want exit 4 (nothing parked)", c.brief())
	}
	c := x.kandev(cmdTimeout, "--permissions", "defer", "resume", id)
	if c.code != 5 {
		r.failf("resume after a SIGKILL inside a parked request: %s, want exit 5 (paused)", c.brief())
	}
	r.outcome = outPaused
	if c := x.kandev(cmdTimeout, "--permissions", "defer", "prompt", id, "--linger", "0", "/say carry on"); c.code != 0 {
		r.failf("the operator's prompt after the pause: %s", c.brief())
	}
	if x.written("A.txt") || x.written("B.txt") {
		r.failf("a write of the cut-off turn happened after the pause was lifted")
	}
	x.cleanLog(id, "after the prompt")
	x.waitOwnerGone(id)
}

// waitOwnerGone waits for a detached owner that has nothing left to serve
// to stop its agent and exit.
func (x *runEnv) waitOwnerGone(id string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if x.liveStatus(id).Status.Reason != "agent_running" {
			waitNoAgents(x.cwd, 3*time.Second)
			return
		}
	}
	x.r.failf("the owner of %s did not exit 10 s after it had nothing to serve", id)
}

// checkExpiryKilled: a warm owner killed as its linger runs out leaves a
// session the next prompt restores, with nothing lost.
func (x *runEnv) checkExpiryKilled(id string) {
	r := x.r
	before, ok := x.cleanLog(id, "after the kill")
	if !ok {
		return
	}
	c := x.kandev(cmdTimeout, "prompt", id, "/say after the expiry")
	if c.code != 0 || !strings.Contains(c.stdout, "after the expiry") {
		r.failf("prompt after a warm owner's expiry or kill: %s", c.brief())
	}
	r.outcome = outNone
	if after, ok := x.cleanLog(id, "after the prompt"); ok {
		x.checkAppendOnly(before, after, "the prompt")
	}
	if st := x.liveStatus(id); st.Status.Reason == "agent_running" || st.Status.Badge != "idle" {
		r.failf("after the prompt: reason %s, badge %s, want idle with no owner", st.Status.Reason, st.Status.Badge)
	}
	waitNoAgents(x.cwd, 3*time.Second)
}
