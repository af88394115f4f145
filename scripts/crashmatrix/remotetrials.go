//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Trials of what a remote brings: a SIGKILL inside `kandev trust` (after it
// showed the servers, before it recorded the trust), inside a pull whose
// log and record passed their checks (before anything is written), and
// at the release of a claim taken for a turn that cannot run. Each kills
// at its named failpoint: this machine is "B", a second home plays "A",
// and a bare repository is the remote.
const (
	kindTrust        = "trust"
	kindPull         = "pull"
	kindClaimRelease = "claim-release"
)

// failpointKinds kill at a named point, not at a calibrated delay.
var failpointKinds = map[string]bool{kindTrust: true, kindPull: true, kindClaimRelease: true}

// remoteRig is the second machine and the remote of a failpoint trial.
type remoteRig struct {
	*runEnv
	bare, marker string
	envA         []string
	id           string
}

// setupRemote makes the remote, this machine's clone (the run's cwd) and
// machine A's home working in the same clone.
func (t *remoteRig) setupRemote() bool {
	t.bare = filepath.Join(t.dir, "remote.git")
	t.marker = filepath.Join(t.dir, "mcp-ran")
	git := func(dir string, args ...string) bool {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.r.failf("setup: git %v: %v %s", args, err, out)
			return false
		}
		return true
	}
	if !git(t.dir, "init", "-q", "--bare", "-b", "main", t.bare) || !git(t.cwd, "init", "-q", "-b", "main") ||
		!git(t.cwd, "add", "notes.txt") || !git(t.cwd, "commit", "-q", "-m", "init") ||
		!git(t.cwd, "remote", "add", "origin", t.bare) || !git(t.cwd, "push", "-q", "origin", "main") {
		return false
	}
	homeA := filepath.Join(t.dir, "homeA")
	os.MkdirAll(homeA, 0o700)
	os.WriteFile(filepath.Join(homeA, "config.toml"), []byte(t.p.configTOML(t.o.kandev)), 0o600)
	for _, kv := range t.env {
		if !strings.HasPrefix(kv, "KANDEV_HOME=") {
			t.envA = append(t.envA, kv)
		}
	}
	t.envA = append(t.envA, "KANDEV_HOME="+homeA, "KANDEV_MACHINE=A")
	t.env = append(t.env, "KANDEV_MACHINE=B")
	return true
}

// onA runs kandev as machine A.
func (t *remoteRig) onA(args ...string) cmdResult {
	env := t.env
	t.env = t.envA
	defer func() { t.env = env }()
	return t.kandev(cmdTimeout, args...)
}

// shareSession starts a session on A (with mcp as its --mcp file when
// given), pushes it, and pulls it here.
func (t *remoteRig) shareSession(mcp string) bool {
	args := []string{"start"}
	if mcp != "" {
		args = append(args, "--mcp", mcp)
	}
	c := t.onA(append(args, "/say a session from machine A")...)
	t.id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	if c.code != 0 || t.id == "" {
		t.r.failf("setup: start on A: %s", c.brief())
		return false
	}
	t.r.sessionID = t.id
	if c := t.onA("push", t.id); c.code != 0 {
		t.r.failf("setup: push on A: %s", c.brief())
		return false
	}
	if c := t.kandev(cmdTimeout, "pull", t.id); c.code != 0 {
		t.r.failf("setup: pull on B: %s", c.brief())
		return false
	}
	return true
}

// killAtFailpoint runs kandev with the failpoint armed and SIGKILLs it once
// it is there; false (and a failure) when it never gets there.
func (x *runEnv) killAtFailpoint(point string, args ...string) (cmdResult, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	arrived := filepath.Join(x.dir, "failpoint-"+point)
	cmd := exec.CommandContext(ctx, x.o.kandev, args...)
	cmd.Dir, cmd.Env = x.cwd, append(append([]string{}, x.env...), "KANDEV_FAILPOINT="+point, "KANDEV_FAILPOINT_FILE="+arrived)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return cmdResult{code: -1, stderr: err.Error()}, false
	}
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if _, serr := os.Stat(arrived); serr == nil {
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
				break wait
			}
		}
	}
	r := cmdResult{stdout: out.String(), stderr: errb.String(), dur: time.Since(t0)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	}
	killed := false
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		killed, r.code = ws.Signal() == syscall.SIGKILL, 128+int(ws.Signal())
	}
	if !killed {
		x.r.failf("kandev %s never reached the failpoint %s: %s", strings.Join(args, " "), point, r.brief())
	}
	return r, killed
}

// remoteStatus is what the remote trials read of kandev status.
type remoteStatus struct {
	Status struct {
		Trust string `json:"trust"`
	} `json:"status"`
}

func (t *remoteRig) trustOf() string {
	var st remoteStatus
	c := t.kandev(cmdTimeout, "--json", "status", t.id)
	if c.code != 0 || json.Unmarshal([]byte(c.stdout), &st) != nil {
		t.r.failf("kandev --json status %s: %s", t.id, c.brief())
	}
	return st.Status.Trust
}

// trustTrial: killed after kandev trust showed the servers, the session
// still waits (nothing is trusted that was not recorded whole), nothing of
// the servers ran, and trust run again records it.
type trustTrial struct{ remoteRig }

func (t *trustTrial) prepare() bool {
	mcp := filepath.Join(t.dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"helper": map[string]any{
		"command": "sh", "args": []string{"-c", "echo ran > " + t.marker}}}})
	os.WriteFile(mcp, b, 0o600)
	if !t.setupRemote() || !t.shareSession(mcp) {
		return false
	}
	if got := t.trustOf(); got != "pending" {
		t.r.failf("setup: the pulled session's trust is %q, want pending", got)
		return false
	}
	return true
}

func (t *trustTrial) failpoint() string { return "trust-shown" }
func (t *trustTrial) args() []string    { return []string{"trust", t.id, "--yes"} }

func (t *trustTrial) check(killed bool, res cmdResult) string {
	r := t.r
	if got := t.trustOf(); got != "pending" {
		r.failf("after the kill inside trust the session's trust is %q, want pending (recorded only after it was shown)", got)
	}
	if _, err := os.Stat(t.marker); err == nil {
		r.failf("a pulled MCP server ran during kandev trust")
	}
	if c := t.kandev(cmdTimeout, "prompt", t.id, "/say hello"); c.code != 3 {
		r.failf("prompt of a session that still waits for trust: %s, want exit 3", c.brief())
	}
	if c := t.kandev(cmdTimeout, "trust", t.id, "--yes"); c.code != 0 {
		r.failf("trust again after the kill: %s", c.brief())
	}
	if got := t.trustOf(); got != "" {
		r.failf("after trust ran again the session's trust is %q", got)
	}
	t.cleanLog(t.id, "after trust")
	return opBefore
}

// pullTrial: A ran a turn since B last pulled; B's pull is killed after the
// remote's lines passed their checks, before any was written. B's log is as
// it was; the next pull brings exactly A's log.
type pullTrial struct {
	remoteRig
	before []byte
}

func (t *pullTrial) prepare() bool {
	if !t.setupRemote() || !t.shareSession("") {
		return false
	}
	if c := t.onA("prompt", t.id, "/say a second turn on A"); c.code != 0 {
		t.r.failf("setup: prompt on A: %s", c.brief())
		return false
	}
	t.before, _ = os.ReadFile(t.logPath(t.id))
	return true
}

func (t *pullTrial) failpoint() string { return "pull-checked" }
func (t *pullTrial) args() []string    { return []string{"pull", t.id} }

func (t *pullTrial) check(killed bool, res cmdResult) string {
	r := t.r
	if now, _ := os.ReadFile(t.logPath(t.id)); string(now) != string(t.before) {
		r.failf("the pull killed before writing changed the log (%d -> %d bytes)", len(t.before), len(now))
	}
	if c := t.kandev(cmdTimeout, "pull", t.id); c.code != 0 {
		r.failf("pull after the killed one: %s", c.brief())
	}
	logA, _ := os.ReadFile(filepath.Join(t.dir, "homeA", "sessions", t.id+".jsonl"))
	if now, _ := os.ReadFile(t.logPath(t.id)); string(now) != string(logA) {
		r.failf("after the completed pull B's log differs from A's (%d vs %d bytes)", len(now), len(logA))
	}
	t.cleanLog(t.id, "after the completed pull")
	return opBefore
}

// claimReleaseTrial: the remote's session ref names a commit that is no
// session; B's prompt takes the claim, fails, and is killed before it
// releases it. The next command on B releases it (it still holds it), so
// A is not locked out for the claim's TTL, and B's log gained nothing.
type claimReleaseTrial struct {
	remoteRig
	before []byte
}

func (t *claimReleaseTrial) prepare() bool {
	if !t.setupRemote() || !t.shareSession("") {
		return false
	}
	cmd := exec.Command("git", "--git-dir="+t.bare, "update-ref", "refs/kandev/sessions/"+t.id, "refs/heads/main")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.r.failf("setup: update-ref: %v %s", err, out)
		return false
	}
	t.before, _ = os.ReadFile(t.logPath(t.id))
	return true
}

func (t *claimReleaseTrial) failpoint() string { return "claim-taken-for-failed-turn" }
func (t *claimReleaseTrial) args() []string    { return []string{"prompt", t.id, "/say never runs"} }

// claim is the remote's claim of the session.
func (t *claimReleaseTrial) claim() string {
	out, _ := exec.Command("git", "--git-dir="+t.bare, "log", "-1", "--format=%B", "refs/kandev/owners/"+t.id).Output()
	return strings.TrimSpace(string(out))
}

func (t *claimReleaseTrial) check(killed bool, res cmdResult) string {
	r := t.r
	land := opPartial
	if c := t.claim(); !strings.Contains(c, `"machine":"B"`) || strings.Contains(c, `"released":true`) {
		land = opBefore
		r.advisories = append(r.advisories, "the claim was not held by B at the kill: "+c)
	}
	if c := t.kandev(cmdTimeout, "prompt", t.id, "/say again"); c.code == 0 || c.code == 3 {
		r.failf("prompt again on an unreadable session ref: %s, want a failure that is not a claim conflict", c.brief())
	}
	if c := t.claim(); !strings.Contains(c, `"released":true`) {
		r.failf("the claim B took for a turn that could not run is still held after the next command: %s", c)
	}
	if c := t.onA("prompt", t.id, "/say on A"); c.code == 3 {
		r.failf("A is locked out by B's claim: %s", c.brief())
	}
	if now, _ := os.ReadFile(t.logPath(t.id)); string(now) != string(t.before) {
		r.failf("turns that could not run changed B's log (%d -> %d bytes)", len(t.before), len(now))
	}
	return land
}
