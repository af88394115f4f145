package e2e_test

// The OpenCode suite: the real OpenCode (see opencode_rig_test.go) driven
// through the built kandev binary, offline. The scenarios every agent
// shares are its row of scenarios_test.go.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestOpenCode_AgentsProbeShowsItsCapabilities(t *testing.T) {
	t.Parallel()
	caps := newOpenCodeRig(t).probe(t, openCodeVersion)
	for _, want := range []string{"resume", "list", "fork", "close"} {
		if _, ok := caps.SessionCapabilities[want]; !ok {
			t.Errorf("sessionCapabilities lack %q: %v", want, caps.SessionCapabilities)
		}
	}
}

func TestOpenCode_SessionOpenCodeNoLongerHasFallsBackToAFreshSessionWithTheHistory(t *testing.T) {
	t.Parallel()
	r := newOpenCodeRig(t)
	r.underCI() // the subject is the restore in each new command: no warm owner
	first := "remember the word MANGO for later"
	id, res := r.start("--agent", "opencode", first)
	if res.code != 0 {
		t.Fatalf("start: %s", res)
	}
	firstAnswer := agentText(r.events(id), lastTurn(r.events(id)))
	oldToken := r.session(id).ResumeToken
	// OpenCode's database is gone (wiped, another machine): it answers the
	// resume with a generic -32603 and its session list lacks the session.
	if err := os.RemoveAll(filepath.Join(r.dataDir, "opencode")); err != nil {
		t.Fatal(err)
	}

	second := "which word did I ask you to remember"
	res = r.run("prompt", id, second)
	if res.code != 0 {
		t.Fatalf("prompt after OpenCode lost the session: %s", res)
	}
	r.assertNoAgentSurvives(id, "prompt exited")
	evs := r.events(id)
	assertNoSeqGap(t, evs)
	starts := ofType(evs, eventlog.EventAgentStarted)
	if len(starts) != 2 || starts[1].Restore != "new" || !strings.Contains(starts[1].FallbackReason, "-32603") {
		t.Fatalf("agent_started events: %+v", starts)
	}
	warned := false
	for _, m := range ofType(evs, eventlog.EventMarker) {
		warned = warned || m.Severity == "warning"
	}
	if !warned {
		t.Error("no warning marker about the session that could not be restored")
	}
	if s := r.session(id); s.ResumeToken == "" || s.ResumeToken == oldToken || s.StopReason != "end_turn" {
		t.Fatalf("record after the fallback: token %q (old %q), stop %q", s.ResumeToken, oldToken, s.StopReason)
	}
	// The fresh OpenCode session was told the history in the resume context.
	turns := r.fake.turns()
	users := turns[len(turns)-1].userTexts()
	if len(users) != 1 || !strings.Contains(users[0], "RESUME CONTEXT") || !strings.Contains(users[0], first) ||
		!strings.Contains(users[0], firstAnswer) || !strings.Contains(users[0], second) {
		t.Fatalf("the model was shown %q, want one resume context with the first turn and the new prompt", users)
	}
	// The next process resumes the new OpenCode session natively.
	if res := r.run("prompt", id, "and once more"); res.code != 0 {
		t.Fatalf("third prompt: %s", res)
	}
	if starts := ofType(r.events(id), eventlog.EventAgentStarted); starts[len(starts)-1].Restore != "resume" {
		t.Fatalf("third agent_started: %+v", starts[len(starts)-1])
	}
	r.assertNoAgentSurvives(id, "the last prompt exited")
}
