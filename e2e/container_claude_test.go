//go:build linux

package e2e_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// Claude's current adapter in a container of the host's root (node and the
// adapter come from it), against the offline fake model on 127.0.0.1 (the
// container shares the host's network): its conversation survives the
// container being killed, restored by the ladder in a new agent process.
func TestContainer_ClaudeRestoresItsConversationAfterItsContainerIsKilled(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	r := newClaudeRig(t)
	first := "remember the word PAPAYA for later"
	id, res := r.start("--agent", "claude", "--runtime", "container", "--linger", "0", first)
	if res.code != 0 {
		t.Fatalf("start in a container: %s", res)
	}
	removeContainerAtEnd(t, id)
	if !strings.Contains(res.stdout, "ack 1: "+first) {
		t.Fatalf("start does not show the model's answer:\n%s", res)
	}
	ctr, _ := containerOf(t, id)
	if ctr == "" {
		t.Fatal("no container for the claude session")
	}
	_ = exec.Command("podman", "kill", ctr).Run() // stopped already (--linger 0): killing it changes nothing

	second := "which word did I ask you to remember"
	res = r.run("prompt", id, "--linger", "0", second)
	if res.code != 0 {
		t.Fatalf("prompt: %s", res)
	}
	evs := r.events(id)
	starts := ofType(evs, "agent_started")
	if len(starts) != 2 || starts[1].Restore != "resume" && starts[1].Restore != "load" {
		t.Fatalf("agent_started events: %+v", starts)
	}
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if got := reqs[1].userTexts(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("user messages the model saw for the second prompt: %q (the conversation was not restored in the container)", got)
	}
}

// The same adapter keeps its slow turn running in the container while every
// kandev process is killed; the next prompt reattaches, the turn ends in the
// same Claude process, and the model is never asked to continue it.
func TestContainer_ClaudesTurnSurvivesEveryKandevKilledAndEndsInTheSameProcess(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	r := newClaudeRig(t)
	id, res := r.start("--agent", "claude", "--runtime", "container", "--linger", "60", "first fast turn about apples")
	if res.code != 0 {
		t.Fatalf("start in a container: %s", res)
	}
	removeContainerAtEnd(t, id)
	pid, started := r.relayAgent(id)
	cmd, _ := r.background("prompt", id, "--linger", "60", claudeSlowPrompt)
	waitFor(t, 30*time.Second, "the slow turn to stream", func() bool { return streamingTurn(claudeSlowPrompt)(r.events(id)) })
	if n := killHostKandevs(t, r.home); n < 2 {
		t.Fatalf("killed %d kandev processes", n)
	}
	_ = cmd.Wait()

	res = r.run("prompt", id, "--linger", "0", "and now a short one")
	if res.code != 0 {
		t.Fatalf("prompt after the kill: %s", res)
	}
	if p, s := r.relayAgent(id); p != pid || s != started {
		t.Fatalf("the adapter is pid %d started %s, want the same process (%d, %s)", p, s, pid, started)
	}
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	if m := ofType(evs, eventlog.EventMarker); len(m) > 0 {
		t.Fatalf("markers after the reattach: %+v", m)
	}
	for _, e := range ofType(evs, eventlog.EventTurnEnded) {
		if e.StopReason != eventlog.StopEndTurn {
			t.Fatalf("turn %s ended %q", e.TurnID, e.StopReason)
		}
	}
	// The fake model's answer, each chunk once (it ends its slow answers short).
	if got := agentText(evs, "t2"); !strings.HasPrefix(got, "ack 2: slowly count sheep") || !strings.HasSuffix(got, "eight n") {
		for _, e := range evs {
			t.Logf("%d %s %s %q %s", e.Seq, e.Timestamp[17:], e.Type, e.Content, e.TurnID)
		}
		t.Fatalf("the slow turn's answer lacks its end: %q", got)
	}
	// Three prompts, three model requests: no continuation was sent.
	if n := len(r.requests()); n != 3 {
		t.Fatalf("the model got %d requests, want 3 (no continuation)", n)
	}
}
