package acp

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/proc"
)

// testHome is the home every launch test's agent is tagged with.
var testHome = os.TempDir()

// launchSh starts sh -c script as an agent tagged with a session id unique to the test.
func launchSh(t *testing.T, script string) (*Process, string) {
	t.Helper()
	id := "launch-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	p, err := Launch(LaunchSpec{Command: []string{"sh", "-c", script}, Dir: t.TempDir(), Home: testHome, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { KillSessionLeftovers(testHome, id) })
	return p, id
}

// waitTaggedCount waits until n processes carry the session tag id.
func waitTaggedCount(t *testing.T, id string, n int) []proc.Proc {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := proc.TaggedProcesses(testHome)[id]
		if len(procs) == n {
			return procs
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d processes tagged %s, have %+v", n, id, procs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLaunch_AgentThatExitsLeavesNothingRunning(t *testing.T) {
	// cat ends on stdin EOF; the background sleep would outlive it.
	p, id := launchSh(t, "sleep 1000 & cat; echo done >&2")
	waitTaggedCount(t, id, 4) // supervisor, sh, sleep, cat
	p.Stop(5 * time.Second)
	if d := p.ExitDescription(); d != "exited with status 0" {
		t.Fatalf("agent ended %q, want exited with status 0", d)
	}
	if left := proc.TaggedProcesses(testHome)[id]; len(left) != 0 {
		t.Fatalf("processes left after the agent exited: %+v", left)
	}
}

func TestLaunch_KillEndsTheAgentsWholeTree(t *testing.T) {
	// The first sleep is orphaned at once (its subshell exits) and in a session
	// of its own (setsid): outside both the agent's tree and its process group.
	p, id := launchSh(t, "(setsid sleep 1000 &); sleep 1000 & exec sleep 1000")
	waitTaggedCount(t, id, 4) // supervisor, the three sleeps
	p.Kill()
	waitTaggedCount(t, id, 0)
}

func TestLaunch_ReportsHowTheAgentEnded(t *testing.T) {
	cases := []struct{ script, want string }{
		{"exit 0", "exited with status 0"},
		{"exit 3", "exited with status 3"},
		{"kill -TERM $$", "killed by signal terminated"},
	}
	for _, c := range cases {
		p, _ := launchSh(t, c.script)
		<-p.Done()
		if got := p.ExitDescription(); got != c.want {
			t.Errorf("%s: %q, want %q", c.script, got, c.want)
		}
	}
}

func TestLaunch_WhatTheAgentWroteBeforeItExitedIsReadInFull(t *testing.T) {
	// 32 KiB, less than a pipe holds, so the agent exits before kandev has
	// read any of it: its last words (a crash's) must still all be read.
	p, _ := launchSh(t, `i=0; while [ $i -lt 512 ]; do printf '%063d\n' $i; i=$((i+1)); done; echo last words; exit 3`)
	if !p.exitsWithin(10 * time.Second) {
		t.Fatal("the agent did not exit")
	}
	time.Sleep(50 * time.Millisecond) // what follows the exit (Wait) has run
	out, err := io.ReadAll(p.Stdout)
	if err != nil {
		t.Fatalf("reading the agent's output after it exited: %v (%d bytes read)", err, len(out))
	}
	if want := 512*64 + len("last words\n"); len(out) != want || !strings.HasSuffix(string(out), "last words\n") {
		t.Fatalf("read %d bytes ending %q, want %d ending \"last words\\n\"", len(out), out[max(len(out)-20, 0):], want)
	}
}
