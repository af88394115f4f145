package e2e_test

// The scenario table: each scenario is written once and runs on every agent
// of agentRigs (rig_test.go) it applies to, one parallel subtest an agent:
// the real agents behind the npm gate, each against its fake model; the
// built-in demo agent with load and resume and without them; the ACP Go
// SDK's example agent. What an agent does differently is data on its row.
// Each runs on the default path, as a person's commands do: the owner of a
// turn is the detached owner a command starts or joins, which lingers with
// its agent after the turn; the scenario closes the session (kandev close
// ID) where a person would, before it checks that no agent is left.

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// forEachRig runs test on each row that applies, as a parallel subtest
// named after the agent.
func forEachRig(t *testing.T, applies func(rigRow) bool, test func(t *testing.T, row rigRow)) {
	for _, row := range agentRigs {
		if applies != nil && !applies(row) {
			continue
		}
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			test(t, row)
		})
	}
}

// turnAnswer is the agent's text in turn from the turn's start on.
func turnAnswer(evs []eventlog.Event, turn string) string {
	var b strings.Builder
	started := false
	for _, e := range evs {
		started = started || e.Type == eventlog.EventTurnStarted && e.TurnID == turn
		if started && e.Type == eventlog.EventAgentMessage && e.TurnID == turn {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

// retoldBeforeTurn is the first event of the conversation (a message, a
// thought, a tool call, a plan, a user message chunk) recorded after the
// last agent_started and before the turn that followed it: a restore's
// replay that was recorded; nil when there is none.
func retoldBeforeTurn(evs []eventlog.Event) *eventlog.Event {
	after := false
	for i, e := range evs {
		switch {
		case e.Type == eventlog.EventAgentStarted:
			after = true
		case e.Type == eventlog.EventTurnStarted:
			after = false
		case !after:
		case e.Type == eventlog.EventAgentMessage, e.Type == eventlog.EventAgentThought, e.Type == eventlog.EventToolCall,
			e.Type == eventlog.EventToolResult, e.Type == eventlog.EventPlan,
			e.Type == eventlog.EventAgentUpdate && strings.Contains(string(e.Data), `"user_message_chunk"`):
			return &evs[i]
		}
	}
	return nil
}

func TestAgents_CancelFromAnotherProcessEndsTheSlowTurnAsCancelled(t *testing.T) {
	t.Parallel()
	forEachRig(t, nil, func(t *testing.T, row rigRow) {
		r := row.open(t, false)
		w := r.World()
		id, res := w.start("--agent", r.Agent(), "a fast first turn")
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		// The owner start left runs the slow turn; the prompt follows it.
		prompt := w.spawn("prompt", id, row.slowPrompt)
		w.waitForEvents(id, "the slow turn to stream", streamingTurn(row.slowPrompt))
		cancelled := time.Now()
		if res := w.run("cancel", id); res.code != 0 {
			prompt.cmd.Process.Kill()
			t.Fatalf("cancel: %s", res)
		}
		res = prompt.wait(t)
		t.Logf("the prompt ended %s after kandev cancel returned", time.Since(cancelled).Round(time.Millisecond))
		if res.code != 0 && res.code != 130 {
			t.Errorf("the cancelled prompt exited %d, want 0 or 130\n%s", res.code, res)
		}
		closeRig(t, r, id, "the cancelled prompt exited")
		evs := w.events(id)
		assertNoSeqGap(t, evs)
		ended := ofType(evs, eventlog.EventTurnEnded)
		if len(ended) == 0 || ended[len(ended)-1].StopReason != "cancelled" {
			t.Fatalf("turn_ended events: %+v", ended)
		}
		if s := w.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
			t.Fatalf("record after cancel: state %s, stop %q", s.State, s.StopReason)
		}
		// The reply was cut short: its last words never reached kandev.
		if got := agentText(evs, ended[len(ended)-1].TurnID); strings.HasSuffix(got, "nine ten") {
			t.Fatalf("the cancelled turn streamed its whole answer: %q", got)
		}
		// The session is still usable.
		if res := w.run("prompt", id, "after the cancel"); res.code != 0 || !strings.Contains(res.stdout, row.replyShows("after the cancel")) {
			t.Fatalf("prompt after cancel: %s", res)
		}
		closeRig(t, r, id, "the last prompt exited")
	})
}

func TestAgents_OwnerKilledMidTurnLeavesNoAgentAndResumeContinuesOnce(t *testing.T) {
	t.Parallel()
	forEachRig(t, nil, func(t *testing.T, row rigRow) {
		r := row.open(t, false)
		w := r.World()
		first := "first fast turn about apples"
		id, res := w.start("--agent", r.Agent(), first)
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		firstAnswer := agentText(w.events(id), lastTurn(w.events(id)))

		// The owner start left runs the slow turn; the prompt follows it.
		prompt := w.spawn("prompt", id, row.slowPrompt)
		evs := w.waitForEvents(id, "the slow turn to stream", streamingTurn(row.slowPrompt))
		owner := w.session(id).OwnerPID
		if owner <= 0 || owner == prompt.cmd.Process.Pid {
			t.Fatalf("the slow turn's owner is %d, want the detached owner start left (the prompt is %d)", owner, prompt.cmd.Process.Pid)
		}
		if _, err := os.Stat("/proc/self/environ"); err == nil { // processes are read from /proc
			if len(r.Live("")) == 0 {
				t.Fatalf("no %s process is running the slow turn", r.Agent())
			}
			starts := ofType(evs, eventlog.EventAgentStarted)
			agentPID := starts[len(starts)-1].PID
			if _, ppid := procState(agentPID); ppid != owner {
				t.Fatalf("the agent %d has parent %d, want the owner %d", agentPID, ppid, owner)
			}
		}
		// SIGKILL, no chance to clean up: the prompt first, so that no
		// command is left to take the turn over, then the owner.
		prompt.cmd.Process.Kill()
		prompt.wait(t)
		if err := kill(owner, syscall.SIGKILL); err != nil {
			t.Fatalf("killing the owner %d: %v", owner, err)
		}
		waitFor(t, 10*time.Second, "the killed owner to be gone", func() bool { return !w.ownerAlive(id) })
		assertRigGone(t, r, id, "the owner was SIGKILLed")

		var st struct {
			Status struct {
				NeedsResume bool `json:"needs_resume"`
				Reason      string
				Badge       string
			}
		}
		decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
		if !st.Status.NeedsResume || st.Status.Reason != "agent_not_running" || st.Status.Badge != "needs-resume" {
			t.Fatalf("status after the kill: %+v", st.Status)
		}
		before := len(r.Requests())
		killedAt := len(w.eventsSoFar(id)) // the kill may have torn the last line

		res = w.run("resume", id)
		if res.code != 0 {
			t.Fatalf("resume: %s", res)
		}
		closeRig(t, r, id, "resume exited")
		all := w.events(id)
		assertNoSeqGap(t, all)
		evs = all[killedAt:]

		// Repair appended a shutdown end to the killed turn.
		slowTurn := ""
		for _, e := range all {
			if e.Type == eventlog.EventUserMessage && e.Content == row.slowPrompt {
				slowTurn = e.TurnID
			}
		}
		repaired := false
		for _, e := range ofType(evs, eventlog.EventTurnEnded) {
			repaired = repaired || e.TurnID == slowTurn && e.StopReason == "shutdown"
		}
		if !repaired {
			t.Errorf("the killed turn %s got no turn_ended shutdown after resume: %+v", slowTurn, ofType(evs, eventlog.EventTurnEnded))
		}
		if starts := ofType(evs, eventlog.EventAgentStarted); len(starts) != 1 || row.killRestore != "" && starts[0].Restore != row.killRestore {
			t.Errorf("agent_started after the kill: %+v, want restore %q", starts, row.killRestore)
		}
		cont := continuationTurns(evs)
		if len(cont) != 1 {
			t.Fatalf("resume sent %d continuation turns, want 1\n%s\n%s", len(cont), res, codexDump(evs))
		}
		if s := w.session(id); s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
			t.Fatalf("record after the continuation: state %s, stop %q", s.State, s.StopReason)
		}
		answer := agentText(all, cont[0].TurnID)
		shown := answer
		if !row.model {
			shown = tailOf(answer) // its tool calls' lines come between
		}
		if answer == "" || !shows(res.stdout, shown) {
			t.Fatalf("the continuation's answer %q is not what resume showed:\n%s", answer, res)
		}

		// The continuation's model request carried the earlier turns.
		reqs := r.Requests()
		if row.model {
			if len(reqs) != before+1 {
				t.Fatalf("the model got %d requests during resume, want 1", len(reqs)-before)
			}
			q := reqs[len(reqs)-1]
			if token := w.session(id).ResumeToken; q.Session != "" && q.Session != token {
				t.Fatalf("the continuation was sent for agent session %q, want the restored %q", q.Session, token)
			}
			if !strings.Contains(q.Input, first) || !strings.Contains(q.Input, firstAnswer) {
				t.Fatalf("the continuation's request lacks the first turn (%q):\n%s", firstAnswer, q.Input)
			}
			if users := q.Users; row.keepsTurns && (len(users) < 3 || users[0] != first || users[1] != row.slowPrompt || users[len(users)-1] == row.slowPrompt) {
				t.Fatalf("user messages the model saw for the continuation: %q", users)
			}
			if len(q.Users) == 0 || answer != fmt.Sprintf("ack %d: %s", q.N, start60(q.Users[len(q.Users)-1])) {
				t.Fatalf("the continuation's answer %q is not the model's reply to request %d", answer, q.N)
			}
		}

		// A second resume finds nothing owed: no turn, no model request.
		turns := len(ofType(all, eventlog.EventTurnStarted))
		if res := w.run("resume", id); res.code != 0 {
			t.Fatalf("second resume: %s", res)
		}
		closeRig(t, r, id, "the second resume exited")
		if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != turns {
			t.Fatalf("the second resume started %d turns", n-turns)
		}
		if n := len(r.Requests()); n != len(reqs) {
			t.Fatalf("the second resume sent %d model requests", n-len(reqs))
		}
	})
}

func TestAgents_PromptInANewProcessRestoresTheAgentSessionWithItsContext(t *testing.T) {
	t.Parallel()
	forEachRig(t, func(row rigRow) bool { return row.restore != "" }, func(t *testing.T, row rigRow) {
		r := row.open(t, false)
		w := r.World()
		first, second := "remember PAPAYA", "recall"
		began := time.Now()
		id, res := w.start("--agent", r.Agent(), first)
		took := time.Since(began)
		if res.code != 0 {
			t.Fatalf("start: %s", res)
		}
		evs := w.events(id)
		logTimings(t, "start with a prompt", began, took, evs)
		firstAnswer := agentText(evs, lastTurn(evs))
		if firstAnswer == "" || !shows(res.stdout, firstAnswer) {
			t.Fatalf("start does not show the agent's answer %q:\n%s", firstAnswer, res)
		}
		if reqs := r.Requests(); row.model && (len(reqs) != 1 || firstAnswer != fmt.Sprintf("ack %d: %s", reqs[0].N, first)) {
			t.Fatalf("the first answer %q is not the model's reply (%d requests)", firstAnswer, len(reqs))
		}
		// Closed, as a person leaves it: the next prompt's owner restores
		// the agent session instead of reaching the warm agent.
		closeRig(t, r, id, "start exited")
		token := w.session(id).ResumeToken
		if token == "" || !strings.HasPrefix(token, row.tokenPrefix) {
			t.Fatalf("resume token after the first turn: %q, want an agent session id (%q...)", token, row.tokenPrefix)
		}

		if row.beforeRestore != nil {
			row.beforeRestore(t, evs)
		}
		began = time.Now()
		res = w.run("prompt", id, second)
		took = time.Since(began)
		if res.code != 0 {
			t.Fatalf("prompt: %s", res)
		}
		closeRig(t, r, id, "prompt exited")
		evs = w.events(id)
		logTimings(t, "prompt in a new process", began, took, evs)
		assertNoSeqGap(t, evs)
		starts := ofType(evs, eventlog.EventAgentStarted)
		if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != row.restore || starts[1].FallbackReason != "" {
			t.Fatalf("agent_started events: %+v, want restore %s", starts, row.restore)
		}
		if n := len(ofType(evs, eventlog.EventUserMessage)); n != 2 {
			t.Fatalf("a replay was recorded again: %d user messages\n%s", n, codexDump(evs))
		}
		s := w.session(id)
		if row.usage != nil {
			agentUsage(t, evs, s, *row.usage)
		}
		if row.restore != "new" && s.ResumeToken != token {
			t.Fatalf("the agent session changed: token %q, was %q", s.ResumeToken, token)
		}
		if s.State != state.StateWaitingForInput || s.StopReason != "end_turn" {
			t.Fatalf("record after the second turn: state %s, stop %q", s.State, s.StopReason)
		}
		answer := turnAnswer(evs, lastTurn(evs))
		// The agent's re-telling of the first turn (a session/load replay,
		// which Gemini CLI sends partly after its answer to the load) is
		// never recorded: not in the new turn, not between the turns.
		if replayed := agentText(evs, lastTurn(evs)); replayed != answer {
			t.Fatalf("agent text recorded in the turn before it started: %q\n%s", strings.TrimSuffix(replayed, answer), codexDump(evs))
		}
		if all := agentText(evs, ""); all != firstAnswer+answer {
			t.Fatalf("agent text in the log: %q, want the two answers %q and %q\n%s", all, firstAnswer, answer, codexDump(evs))
		}
		if e := retoldBeforeTurn(evs); e != nil {
			t.Fatalf("the restored agent's re-telling was recorded before the turn (seq %d, %s)\n%s", e.Seq, e.Type, codexDump(evs))
		}
		if !row.model {
			// Asked to recall, the agent names the word from the first
			// turn: it had that turn, restored or as the resume context.
			if !strings.Contains(answer, "PAPAYA") || !shows(res.stdout, answer) {
				t.Fatalf("the answer to %q: %q\n%s", second, answer, res)
			}
			return
		}
		// The model saw the first turn when it answered the second: the
		// conversation was restored, not merely its id reused.
		reqs := r.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the model got %d requests, want 2", len(reqs))
		}
		q := reqs[1]
		if answer != fmt.Sprintf("ack %d: %s", q.N, second) {
			t.Fatalf("second turn's answer: %q (request %d)\n%s", answer, q.N, codexDump(evs))
		}
		if q.Session != "" && q.Session != token || row.modelPath != "" && q.Path != row.modelPath {
			t.Fatalf("second request: session %q, path %q, want %q and %q", q.Session, q.Path, token, row.modelPath)
		}
		if got := q.Users; len(got) != 2 || got[0] != first || got[1] != second {
			t.Fatalf("user messages the model saw for the second prompt: %q", got)
		}
		if !strings.Contains(q.Input, firstAnswer) {
			t.Fatalf("the first answer %q is missing from the second request:\n%s", firstAnswer, q.Input)
		}
		if q.Answers != nil && (len(q.Answers) != 1 || q.Answers[0] != firstAnswer) {
			t.Fatalf("the model's own history after the restore: %q", q.Answers)
		}
	})
}

func TestAgents_NeverPromptedSessionIsRestoredOrFallsBackToANewSession(t *testing.T) {
	t.Parallel()
	forEachRig(t, func(row rigRow) bool { return row.emptyRestore != "" }, func(t *testing.T, row rigRow) {
		r := row.open(t, false)
		w := r.World()
		began := time.Now()
		id, res := w.start("--agent", r.Agent())
		if res.code != 0 {
			t.Fatalf("start without a prompt: %s", res)
		}
		t.Logf("start without a prompt: %s in all", time.Since(began).Round(time.Millisecond))
		closeRig(t, r, id, "the empty start exited")
		token := w.session(id).ResumeToken
		if token == "" {
			t.Fatal("no resume token after an empty start")
		}
		if n := len(r.Requests()); n != 0 {
			t.Fatalf("an empty start sent %d model requests", n)
		}

		prompt := "hello after an empty start"
		if res := w.run("prompt", id, prompt); res.code != 0 {
			t.Fatalf("prompt: %s", res)
		}
		closeRig(t, r, id, "prompt exited")
		evs := w.events(id)
		assertNoSeqGap(t, evs)
		starts := ofType(evs, eventlog.EventAgentStarted)
		fellBack := len(row.emptyFallback) > 0
		if len(starts) != 2 || starts[1].Restore != row.emptyRestore || fellBack != (starts[1].FallbackReason != "") ||
			fellBack && !containsAny(starts[1].FallbackReason, row.emptyFallback) {
			t.Fatalf("agent_started events: %+v, want restore %s, fallback naming one of %q", starts, row.emptyRestore, row.emptyFallback)
		}
		markers := ofType(evs, eventlog.EventMarker)
		if fellBack {
			// The agent did not know the session: kandev says a fresh one
			// takes its place, and that there was no history to carry.
			if len(markers) != 1 || markers[0].Kind != "resume_failed" || markers[0].Severity != "warning" || !strings.Contains(markers[0].Summary, "no history") {
				t.Fatalf("markers: %+v", markers)
			}
		} else {
			for _, m := range markers {
				if m.Severity == "warning" {
					t.Errorf("unexpected warning marker: %s", m.Summary)
				}
			}
		}
		s := w.session(id)
		if s.State != state.StateWaitingForInput || s.StopReason != "end_turn" || s.ResumeToken == "" || (s.ResumeToken == token) != (row.emptyRestore != "new") {
			t.Fatalf("record: state %s, stop %q, token %q (was %q), want restore %s", s.State, s.StopReason, s.ResumeToken, token, row.emptyRestore)
		}
		answer := agentText(evs, lastTurn(evs))
		if !strings.Contains(answer, row.replyShows(prompt)) {
			t.Fatalf("the answer after the restore: %q", answer)
		}
		if row.model {
			// Nothing was said before, so there is no history to inject
			// (docs/resume.md, "The resume context").
			reqs := r.Requests()
			if len(reqs) != 1 || len(reqs[0].Users) != 1 || reqs[0].Users[0] != prompt || reqs[0].Session != "" && reqs[0].Session != s.ResumeToken {
				t.Fatalf("model requests:\n%swant one with only the prompt, for session %q", requestsDump(reqs), s.ResumeToken)
			}
			if answer != fmt.Sprintf("ack %d: %s", reqs[0].N, prompt) {
				t.Fatalf("the answer after the restore: %q, want the reply to request %d", answer, reqs[0].N)
			}
		}

		// The agent session the prompt used was saved: the next owner, after
		// the close, restores it as any other.
		if res := w.run("prompt", id, "and once more"); res.code != 0 {
			t.Fatalf("third prompt: %s", res)
		}
		if starts := ofType(w.events(id), eventlog.EventAgentStarted); starts[len(starts)-1].Restore != row.restore {
			t.Fatalf("third agent_started: %+v, want restore %s", starts[len(starts)-1], row.restore)
		}
		if reqs := r.Requests(); row.model && (len(reqs) != 2 || !strings.Contains(reqs[1].Input, answer)) {
			t.Fatalf("the third prompt's request lacks the second turn's answer %q", answer)
		}
		closeRig(t, r, id, "the last prompt exited")
	})
}

func TestAgents_PermissionModeAnswersTheAgentsBashRequests(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"approve-all", "deny-all"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			forEachRig(t, func(row rigRow) bool { return row.toolPrompt != "" }, func(t *testing.T, row rigRow) {
				allowed, want := mode == "approve-all", row.allow
				if !allowed {
					want = row.deny
				}
				r := row.open(t, true)
				w := r.World()
				id, res := w.start("--agent", r.Agent(), "--permissions", mode, row.toolPrompt)
				if res.code != 0 {
					t.Fatalf("start: %s", res)
				}
				closeRig(t, r, id, "start exited")
				b, err := os.ReadFile(proofFile(w))
				if ran := err == nil; ran != allowed || allowed && string(b) != "ran\n" {
					t.Fatalf("the command ran in the session cwd: %v (%q), want %v", ran, b, allowed)
				}
				evs := w.events(id)
				assertNoSeqGap(t, evs)
				asked, answered := ofType(evs, eventlog.EventPermissionRequest), ofType(evs, eventlog.EventPermissionResolved)
				if len(asked) != 1 || len(answered) != 1 || !strings.Contains(string(answered[0].Data), fmt.Sprintf(`"allowed":%v`, allowed)) {
					t.Fatalf("permission events: %+v %+v", asked, answered)
				}
				call := asked[0].ToolCallID
				if call == "" || answered[0].ToolCallID != call {
					t.Fatalf("permission request and answer name different tool calls: %q, %q", call, answered[0].ToolCallID)
				}
				// The request, or the call it is for, names the command.
				named := strings.Contains(asked[0].ToolName, "tool-proof.txt")
				output := ""
				for _, e := range append(ofType(evs, eventlog.EventToolCall), ofType(evs, eventlog.EventToolResult)...) {
					if e.ToolCallID == call {
						named = named || strings.Contains(string(e.Input), "tool-proof.txt")
						output += e.Content
					}
				}
				if !named {
					t.Errorf("neither the permission request nor tool call %s names the command\n%s", call, codexDump(evs))
				}
				if results := ofType(evs, eventlog.EventToolResult); want.status != "" || want.recorded != "" {
					if len(results) == 0 {
						t.Fatalf("no tool_result for tool call %s\n%s", call, codexDump(evs))
					}
					if last := results[len(results)-1]; row.oneToolResult && len(results) != 1 || last.ToolCallID != call || want.status != "" && last.ToolStatus != want.status || !strings.Contains(output, want.recorded) {
						t.Fatalf("tool_result events: %+v (output recorded: %q, want %q)\n%s", results, output, want.recorded, codexDump(evs))
					}
				}
				if s := w.session(id); s.StopReason != want.stop || s.State != state.StateWaitingForInput {
					t.Fatalf("record after the tool turn: state %s, stop %q, want %q", s.State, s.StopReason, want.stop)
				}
				if want.nextTurn {
					if n := len(r.Requests()); n != 1 {
						t.Fatalf("the model got %d requests in the refused turn, want 1 (the agent ends the turn)", n)
					}
					if res := w.run("prompt", id, "what happened"); res.code != 0 {
						t.Fatalf("prompt after the refusal: %s", res)
					}
					closeRig(t, r, id, "the prompt after the refusal exited")
				} else if answer := agentText(evs, "t1"); !strings.Contains(answer, want.answer) {
					t.Fatalf("the answer after the tool: %q, want it to hold %q", answer, want.answer)
				}
				if !row.model {
					return
				}
				reqs := r.Requests()
				for _, q := range reqs {
					// Never the output; nor, when it is not asked again, the
					// command (which names the output) as a call it made.
					sent := strings.Join(q.Tools, "\n")
					if want.told == "" {
						sent = q.Input
					}
					if !allowed && strings.Contains(sent, "TOOL-OUTPUT-42") {
						t.Fatal("the model was sent output of a denied command")
					}
				}
				if want.told == "" {
					return
				}
				// The model asked for the call, then was told its outcome.
				if len(reqs) != 2 || row.modelCallIDs && !strings.Contains(reqs[1].Input, call) {
					t.Fatalf("the model was not sent the result of tool call %s: %d requests", call, len(reqs))
				}
				if got := reqs[1].Tools; len(got) != 1 || !strings.Contains(got[0], want.told) {
					t.Fatalf("the tool results the model was sent: %q, want one with %q", got, want.told)
				}
				if answer := agentText(evs, "t1"); !want.nextTurn && !strings.HasPrefix(answer, fmt.Sprintf("tool done %d: ", reqs[1].N)) {
					t.Fatalf("the answer after the tool: %q", answer)
				}
			})
		})
	}
}
