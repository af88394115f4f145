package e2e_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

func TestStart_AgentThatCannotLaunchLeavesAFailedSessionSaidOnceAndLatestSkipsIt(t *testing.T) {
	t.Parallel()
	silent := writeScript(t, "silent-agent", "sleep 30\n")
	cases := []struct {
		name, command, want string
	}{
		{"not installed", `["kandev-no-such-agent-xyz"]`, "not found on PATH"},
		{"handshake fails", `["` + silent + `"]`, "did not answer initialize"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.config("[agent]\nhandshake_timeout_seconds = 2\n[agents.x]\ncommand = " + tc.command + "\n")
			good, _ := w.start("remember FIG")
			id, r := w.start("--agent", "x", "hi")
			if r.code != 6 {
				t.Fatalf("exit %d, want 6\n%s", r.code, r)
			}
			if n := strings.Count(r.stdout+r.stderr, tc.want); n != 1 {
				t.Fatalf("the error is printed %d times, want once:\n%s", n, r)
			}
			s := w.session(id)
			if s.State != state.StateFailed || !strings.Contains(s.ErrorMessage, tc.want) {
				t.Fatalf("record: state %s, error %q", s.State, s.ErrorMessage)
			}
			if st := w.status(id); st.Status.Badge != verdict.BadgeFailed {
				t.Fatalf("status: %+v", st.Status)
			}
			r = w.mustRun("prompt", "--latest", "recall")
			if !strings.Contains(r.stdout, "FIG") {
				t.Fatalf("prompt --latest did not go to %s:\n%s", good, r)
			}
			var res struct {
				Session struct{ ID string }
			}
			lines := strings.Split(strings.TrimSpace(w.mustRun("--json", "resume", "--latest").stdout), "\n")
			decodeJSON(t, lines[len(lines)-1], &res)
			if res.Session.ID != good {
				t.Fatalf("resume --latest picked %s, want %s", res.Session.ID, good)
			}
		})
	}
}

func TestResume_HandshakeFailureOfASessionThatWorkedBeforeKeepsItResumable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	flag := filepath.Join(t.TempDir(), "hang")
	agent := writeScript(t, "flaky-agent", "if [ -f "+flag+" ]; then sleep 30; fi\nexec "+kandevBin+" demo-agent\n")
	w.config("[agent]\nhandshake_timeout_seconds = 2\n[agents.flaky]\ncommand = [\"" + agent + "\"]\n")
	// --linger 0: resume must restore the agent, not find it warm.
	id, r := w.start("--linger", "0", "--agent", "flaky", "remember PLUM")
	if r.code != 0 {
		t.Fatal(r)
	}
	token := w.session(id).ResumeToken
	os.WriteFile(flag, nil, 0o600)
	if r := w.run("resume", id); r.code != 6 || !strings.Contains(r.stderr, "retry with kandev resume") {
		t.Fatalf("want exit 6 with a retry hint:\n%s", r)
	}
	if s := w.session(id); s.State == state.StateFailed || s.ResumeToken != token {
		t.Fatalf("a session that worked before became %s (token %q, was %q)", s.State, s.ResumeToken, token)
	}
	os.Remove(flag)
	if r := w.run("prompt", id, "recall"); r.code != 0 || !strings.Contains(r.stdout, "PLUM") {
		t.Fatalf("retry: %s", r)
	}
}

func TestRead_AFileTooLargeForOneAnswerFailsTheToolClearlyAndTheTurnCompletes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 200_000) // 20 MB
	if err := os.WriteFile(filepath.Join(w.cwd, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	id, r := w.start("/read big.txt\n/say still here")
	if r.code != 0 {
		t.Fatal(r)
	}
	evs := w.events(id)
	res := ofType(evs, eventlog.EventToolResult)
	if len(res) != 1 || res[0].ToolStatus != "failed" || !strings.Contains(res[0].Content, "too large") {
		t.Fatalf("tool result: %+v", res)
	}
	if stop := turnEnd(evs, lastTurn(evs)); stop != eventlog.StopEndTurn || !strings.Contains(agentText(evs, ""), "still here") {
		t.Fatalf("turn ended %q, want end_turn after the read", stop)
	}
}

func TestPrompt_ALaterQueuedInputThatFailsIsAWarningNotTheExitCode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: the subject is an owner in the command that serves the
	// inputs queued behind its own turn (a detached owner serves them alone).
	id, _ := w.start("--linger", "0")
	cmd := exec.Command(kandevBin, "prompt", "--linger", "0", id, "/say mine\n/sleep 1500")
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the owner's turn", func() bool { return agentText(w.eventsSoFar(id), "") != "" })
	w.mustRun("prompt", id, "--no-follow", "/crash")
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("the owner's own turn succeeded but it exited: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "warning: ") || !strings.Contains(errb.String(), "failed") {
		t.Fatalf("no warning about the failed queued input:\n%s", errb.String())
	}
	if evs := w.events(id); turnEnd(evs, lastTurn(evs)) != eventlog.StopProcessExit {
		t.Fatalf("the queued input was not served: %s", turnEnd(evs, lastTurn(evs)))
	}
}

// fillDisk writes into dir until the file system is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for len(chunk) > 0 {
		if _, err := f.Write(chunk); err != nil {
			chunk = chunk[:len(chunk)/2]
		}
	}
	return p
}

func TestStorage_FullDiskMidTurnEndsWithOneLineExit1AndRepairGivesAReadableLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	home := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", home).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs for a full disk (%v: %s)", err, out)
	}
	// A warm owner left in the tmpfs would keep it busy: end it first.
	t.Cleanup(func() { endOwners(home); exec.Command("umount", home).Run() })
	w.home = home
	w.env = append(w.env, "KANDEV_HOME="+home)
	id, r := w.start()
	if r.code != 0 {
		t.Fatal(r)
	}
	cmd := exec.Command(kandevBin, "--json", "prompt", id, "/say working\n/sleep 1500\n/bulk 20000")
	cmd.Dir, cmd.Env = w.cwd, w.env
	var errb strings.Builder
	cmd.Stderr = &errb
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var printed []eventlog.Event
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e eventlog.Event
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Seq > 0 {
				printed = append(printed, e)
			}
		}
	}()
	waitFor(t, 20*time.Second, "the turn to stream", func() bool { return agentText(w.eventsSoFar(id), "") != "" })
	filler := fillDisk(t, home)
	<-read
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, errb.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if strings.Contains(l, "no space left on device") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kandev: cannot write") {
		t.Fatalf("want one line naming the cause:\n%s", errb.String())
	}
	os.Remove(filler)
	t.Logf("stderr: %s\nprinted %d events; repair: %s", errb.String(), len(printed), w.mustRun("repair", id).stdout)
	var ev struct{ Events []eventlog.Event }
	decodeJSON(t, w.mustRun("--json", "events", id).stdout, &ev)
	assertNoSeqGap(t, ev.Events)
	assertAcknowledgedKept(t, printed, ev.Events)
	w.mustRun("resume", id)
	assertNoSeqGap(t, w.events(id))
}
