package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// Claude's adapter offline: the fake model asks for Claude Code's Agent
// tool, the child it starts runs against the same fake model, and kandev
// records it as a child of its own (kandev declares subagents).

func claudeSubagentRig(t *testing.T, childCmd string) *claudeRig {
	t.Helper()
	requireNPMOptIn(t, "Claude's ACP adapter")
	script := filepath.Join(t.TempDir(), "script.jsonl")
	rules := `{"match":"BGDELEGATE","tool":"Agent","arguments":"{\"description\":\"watch in the background\",\"prompt\":\"CHILDWORK please\",\"subagent_type\":\"general-purpose\",\"run_in_background\":true}","once":true}
{"match":"FGDELEGATE","tool":"Agent","arguments":"{\"description\":\"scout the repo\",\"prompt\":\"CHILDWORK please\",\"subagent_type\":\"general-purpose\"}","once":true}
{"match":"CHILDWORK","tool":"Bash","arguments":"{\"command\":\"` + childCmd + `\",\"description\":\"the child's command\"}","once":true}
`
	if err := os.WriteFile(script, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return newClaudeRig(t, "-script", script)
}

func TestSubagent_ClaudeAdapterOfflineRecordsItsAgentToolChild(t *testing.T) {
	t.Parallel()
	r := claudeSubagentRig(t, "echo child-ran > child-proof.txt")
	id, res := r.start("--agent", "claude", "--permissions", "approve-all", "FGDELEGATE now")
	if res.code != 0 {
		t.Fatalf("start: %s\n%v", res, r.requests())
	}
	r.closeOnCleanup(id)
	evs := r.events(id)
	started := ofType(evs, eventlog.EventChildStarted)
	if len(started) != 1 {
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Type)
		}
		t.Fatalf("children started: %d; events %v", len(started), kinds)
	}
	child := started[0].ChildID
	if got := childEnd(evs, child); got != "completed" {
		t.Fatalf("the child ended %q", got)
	}
	calls := ofType(childEvents(evs, child), eventlog.EventChildToolResult)
	if len(calls) == 0 {
		t.Fatalf("no tool call of the child: %+v", childEvents(evs, child))
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "child-proof.txt")); err != nil {
		t.Fatalf("the child's command did not run: %v", err)
	}
}

func TestSubagent_ClaudeAdapterOfflineChildOfAKilledOwnerIsNamedInTheContinuation(t *testing.T) {
	t.Parallel()
	r := claudeSubagentRig(t, "echo child-ran > child-proof.txt; sleep 60")
	id, res := r.start("--agent", "claude", "--permissions", "approve-all", "/say ready")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.closeOnCleanup(id)
	b := r.spawn("prompt", "--permissions", "approve-all", id, "FGDELEGATE now")
	r.waitForEvents(id, "the child's command to start", func(evs []eventlog.Event) bool {
		_, err := os.Stat(filepath.Join(r.cwd, "child-proof.txt"))
		return len(ofType(evs, eventlog.EventChildToolCall)) > 0 && err == nil
	})
	if pid := r.session(id).OwnerPID; pid > 0 {
		kill(pid, syscall.SIGKILL)
	}
	b.cmd.Process.Kill()
	<-b.done
	waitFor(t, 10*time.Second, "the killed owner to be gone", func() bool { return !r.ownerAlive(id) })
	killSurvivors(r.home, id)
	if res := r.run("resume", "--permissions", "approve-all", id); res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	evs := r.events(id)
	child := ofType(evs, eventlog.EventChildStarted)[0].ChildID
	if got := childEnd(evs, child); got != "unknown" {
		t.Fatalf("the child of the killed owner ended %q", got)
	}
	cont := continuationTurns(evs)
	if len(cont) != 1 {
		t.Fatalf("%d continuations", len(cont))
	}
	var prompt string
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && e.TurnID == cont[0].TurnID {
			prompt = e.Content
		}
	}
	if !strings.Contains(prompt, "(id "+child+")") || !strings.Contains(prompt, "child-proof.txt") {
		t.Fatalf("the continuation does not name the child and its command:\n%s", prompt)
	}
}

func TestSubagent_ClaudeAdapterOfflineBackgroundChildIsRecordedAfterItsTurn(t *testing.T) {
	t.Parallel()
	r := claudeSubagentRig(t, "echo child-ran > child-proof.txt")
	id, res := r.start("--agent", "claude", "--permissions", "approve-all", "BGDELEGATE now")
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	r.closeOnCleanup(id)
	evs := r.waitForEvents(id, "the background child to end", func(evs []eventlog.Event) bool {
		started := ofType(evs, eventlog.EventChildStarted)
		return len(started) == 1 && childEnd(evs, started[0].ChildID) != ""
	})
	child := ofType(evs, eventlog.EventChildStarted)[0].ChildID
	if got := childEnd(evs, child); got != "completed" {
		t.Fatalf("the background child ended %q", got)
	}
	if len(ofType(childEvents(evs, child), eventlog.EventChildToolResult)) == 0 {
		t.Fatalf("no tool call of the child: %+v", childEvents(evs, child))
	}
}
