package e2e_test

// The editor's prompts are answered by their own turns: turns kandev acp's
// owner runs for its own reasons (the re-send or continuation of a turn an
// editor's death cut off) are shown, never reported as an answer, and they
// do not hold up a load.

import (
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

// killEditorBeforeTheAgentSpoke runs prompt in an editor and SIGKILLs
// kandev acp while the agent holds the prompt and has said nothing yet.
func killEditorBeforeTheAgentSpoke(t *testing.T, w *world, prompt string) sdk.SessionId {
	t.Helper()
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	go ed.prompt(id, prompt)
	waitForRunningTurn(t, w, string(id))
	time.Sleep(300 * time.Millisecond) // the prompt is with the agent, which says nothing during /sleep
	if n := len(ofType(w.eventsSoFar(string(id)), eventlog.EventAgentMessage)); n != 0 {
		t.Fatalf("the agent spoke (%d messages) before the kill", n)
	}
	ed.cmd.Process.Signal(syscall.SIGKILL)
	<-ed.exited
	return id
}

// promptOwnAnswer prompts and checks the answer is this prompt's own: the
// text it asked for was shown before the answer came, and the turn that
// ended is the one that carries it. It returns every update the editor was
// shown until the answer.
func promptOwnAnswer(t *testing.T, w *world, ed *editorProc, id sdk.SessionId, word string) []sdk.SessionUpdate {
	t.Helper()
	before := ed.take(id)
	stop, err := ed.prompt(id, "/say "+word)
	during := ed.take(id)
	shown := chunkText(during, "agent")
	if err != nil || stop != sdk.StopReasonEndTurn {
		t.Fatalf("prompt %q: stop %q, err %v\n%s", word, stop, err, ed.stderr)
	}
	if !strings.Contains(shown, word) {
		t.Fatalf("prompt %q was answered before its own text was shown (shown so far: %q): an answer of another turn", word, shown)
	}
	evs := w.events(string(id))
	var mine string
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && e.Content == "/say "+word {
			mine = e.TurnID
		}
	}
	if mine == "" || !strings.Contains(agentText(evs, mine), word) {
		t.Fatalf("no turn of the log carries %q and its answer", word)
	}
	for _, e := range ofType(evs, eventlog.EventTurnEnded) {
		if e.TurnID == mine && e.StopReason == "end_turn" {
			return append(before, during...)
		}
	}
	t.Fatalf("the turn %s that carries %q has not ended end_turn in the log", mine, word)
	return nil
}

func TestEditor_AfterAKilledUnansweredTurnEveryPromptGetsItsOwnAnswer(t *testing.T) {
	t.Parallel()
	for _, load := range []bool{true, false} {
		name := "prompted without a load"
		if load {
			name = "loaded then prompted"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			id := killEditorBeforeTheAgentSpoke(t, w, "/sleep 2000\nremember KIWI")

			ed := w.openEditor()
			ed.initialize()
			if load {
				ed.load(id, w.cwd)
			}
			// The owner first sends what it owes the cut-off turn (its re-send,
			// or its continuation); each prompt after that is answered by its own turn.
			promptOwnAnswer(t, w, ed, id, "FIRST")
			promptOwnAnswer(t, w, ed, id, "SECOND")
			promptOwnAnswer(t, w, ed, id, "THIRD")
			if code := ed.quit(); code != 0 {
				t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
			}
			evs := w.events(string(id))
			if n := len(ofType(evs, eventlog.EventTurnStarted)); n != 5 {
				t.Fatalf("%d turns, want 5 (the killed one, its follow-up, three prompts)", n)
			}
			follow := ofType(evs, eventlog.EventTurnStarted)[1]
			if follow.Source == eventlog.SourceQueued || follow.InputID != "" {
				t.Fatalf("the follow-up of the killed turn: %s", mustJSON(follow))
			}
		})
	}
}

func TestEditor_LoadAndResumeAnswerBeforeTheContinuationEndsAndAPromptQueuesBehindIt(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"session/load", "session/resume"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			loadOrResumeDuringAContinuation(t, method)
		})
	}
}

func loadOrResumeDuringAContinuation(t *testing.T, method string) {
	w := newWorld(t)
	// Every update of this agent takes 400 ms: its continuation answer
	// (several echoed lines) takes seconds.
	w.config("[agents.slow]\ncommand = [\"" + kandevBin + "\", \"demo-agent\", \"--delay\", \"400\"]\n")
	ed := w.openEditor("--agent", "slow")
	ed.initialize()
	id := ed.newSession(w.cwd)
	go ed.prompt(id, "remember MANGO\n/sleep 30000")
	w.waitForEvents(string(id), "the agent's first words", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventAgentMessage)) > 0
	})
	ed.cmd.Process.Signal(syscall.SIGKILL)
	<-ed.exited

	ed2 := w.openEditor("--agent", "slow")
	ed2.initialize()
	began := time.Now()
	if method == "session/load" {
		ed2.load(id, w.cwd)
	} else {
		ctx, cancel := editorCtx()
		defer cancel()
		if _, err := ed2.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: w.cwd}); err != nil {
			t.Fatalf("session/resume: %v\n%s", err, ed2.stderr)
		}
	}
	loaded := time.Since(began)
	evs := w.events(string(id))
	for _, e := range ofType(evs, eventlog.EventTurnEnded) {
		if e.TurnID != "t1" {
			t.Fatalf("%s was answered %s after the continuation ended (%s): it must not wait for it", method, loaded, mustJSON(e))
		}
	}
	// Sent while the continuation runs: it waits behind it, and is answered by its own turn.
	shown := promptOwnAnswer(t, w, ed2, id, "MINE")
	if got := chunkText(shown, "user"); !strings.Contains(got, "The previous turn was interrupted") {
		t.Fatalf("the editor was not shown the continuation as it ran; user text shown: %q", got)
	}
	t.Logf("%s answered in %s, before the continuation ended", method, loaded)
	evs = w.events(string(id))
	starts := ofType(evs, eventlog.EventTurnStarted)
	if len(starts) != 3 || starts[1].Source != eventlog.SourceContinuation {
		t.Fatalf("turns %s, want the killed one, its continuation, the editor's prompt", mustJSON(starts))
	}
	var contEnd, mineStart int64
	for _, e := range evs {
		if e.Type == eventlog.EventTurnEnded && e.TurnID == starts[1].TurnID {
			contEnd = e.Seq
		}
		if e.Type == eventlog.EventTurnStarted && e.TurnID == starts[2].TurnID {
			mineStart = e.Seq
		}
	}
	if contEnd == 0 || mineStart < contEnd {
		t.Fatalf("the editor's prompt (seq %d) did not wait for the continuation to end (seq %d)", mineStart, contEnd)
	}
	ed2.quit()
}
