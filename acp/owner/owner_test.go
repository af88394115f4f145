package owner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// cutOff leaves session id as an owner killed during turn would: the
// turn's events in the log, the record saying it runs.
func (r *rig) cutOff(id, turn string, permissionPending bool, evs ...eventlog.Event) {
	r.t.Helper()
	log, _, err := r.home.OpenLog(id, eventlog.OpenLogOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	defer log.Close()
	for i := range evs {
		evs[i].TurnID = turn
		if err := log.AppendSync(&evs[i]); err != nil {
			r.t.Fatal(err)
		}
	}
	if _, err := r.home.UpdateSession(id, func(s *state.Session) error {
		s.Turns++
		s.CurrentTurn, s.State, s.PermissionPending = turn, state.StateRunning, permissionPending
		return nil
	}); err != nil {
		r.t.Fatal(err)
	}
}

func userTurn(text string) []eventlog.Event {
	return []eventlog.Event{
		{Type: eventlog.EventTurnStarted, Source: eventlog.SourceUser},
		{Type: eventlog.EventUserMessage, Role: "user", Content: text},
		{Type: eventlog.EventState, State: state.StateRunning},
	}
}

// turnsBy counts the turns of the log started with source.
func turnsBy(evs []eventlog.Event, source string) int {
	n := 0
	for _, e := range evs {
		if e.Type == eventlog.EventTurnStarted && e.Source == source {
			n++
		}
	}
	return n
}

func markers(evs []eventlog.Event, kind history.MarkerKind) int {
	n := 0
	for _, e := range evs {
		if e.Type == eventlog.EventMarker && e.Kind == string(kind) {
			n++
		}
	}
	return n
}

func TestOwner_FallsBackToLoadWhenResumeIsMethodNotFound(t *testing.T) {
	r := newRig(t)
	r.opts.NoResume = true
	r.rewrite = advertiseResume
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	res := r.mustRun(r.job(id, "recall"))
	if res.Restore != acp.RestoreLoad || !strings.Contains(res.FallbackReason, "session/resume: -32601") {
		t.Fatalf("restore %q, fallback %q; want load after resume's method-not-found", res.Restore, res.FallbackReason)
	}
	if got := r.prompts(); got[len(got)-1] != "recall" {
		t.Fatalf("a loaded conversation got the resume context: %q", got[len(got)-1])
	}
	if s := r.session(id); s.PendingContext || s.State != state.StateWaitingForInput {
		t.Fatalf("record after load: %+v", s)
	}
}

// advertiseResume makes the agent's initialize answer advertise
// session/resume, which the agent then answers with method-not-found.
func advertiseResume(line []byte) []byte {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	res, _ := m["result"].(map[string]any)
	caps, _ := res["agentCapabilities"].(map[string]any)
	if caps == nil {
		return line
	}
	sc, _ := caps["sessionCapabilities"].(map[string]any)
	if sc == nil {
		sc = map[string]any{}
	}
	sc["resume"] = map[string]any{}
	caps["sessionCapabilities"] = sc
	out, _ := json.Marshal(m)
	return out
}

func TestOwner_UnknownSessionStartsFreshAndInjectsTheResumeContextOnce(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	r.opts.FailOnResume = true
	res := r.mustRun(r.job(id, "recall"))
	if res.Restore != acp.RestoreNew || !strings.Contains(res.FallbackReason, "session/resume") {
		t.Fatalf("restore %q, fallback %q; want a fresh session", res.Restore, res.FallbackReason)
	}
	if n := markers(r.events(id), history.MarkerResumeFailed); n != 1 {
		t.Fatalf("%d resume_failed markers, want 1", n)
	}
	r.opts.FailOnResume = false
	r.mustRun(r.job(id, "hello"))
	p := r.prompts()
	if len(p) != 3 || !strings.Contains(p[1], "remember apple") || !strings.Contains(p[1], "=== CURRENT REQUEST ===\nrecall\n") || p[2] != "hello" {
		t.Fatalf("want the context with the first prompt after the fresh session only; prompts sent: %q", p)
	}
	if !strings.Contains(lastAgentText(r.events(id), "t2"), "apple") {
		t.Fatal("the fresh agent session did not get the history")
	}
}

// lastAgentText is the agent's text in turn.
func lastAgentText(evs []eventlog.Event, turn string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == eventlog.EventAgentMessage && e.TurnID == turn {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

func TestOwner_ContinuesAnInterruptedTurnOnce(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	r.cutOff(id, "t2", false, append(userTurn("/say working\n/sleep 5000"),
		eventlog.Event{Type: eventlog.EventAgentMessage, Role: "agent", Content: "working"})...)
	r.mustRun(r.job(id, ""))
	r.mustRun(r.job(id, ""))
	evs := r.events(id)
	if n := turnsBy(evs, eventlog.SourceContinuation); n != 1 {
		t.Fatalf("%d continuations, want exactly 1", n)
	}
	if p := r.prompts(); len(p) != 2 || !strings.Contains(p[1], "interrupted") {
		t.Fatalf("prompts sent: %q", p)
	}
	if s := r.session(id); s.Turns != 3 || s.ContinuedTurn != "t2" || s.Interrupted != nil || len(s.RestartAttempts) != 1 {
		t.Fatalf("record after the continuation: %+v", s)
	}
}

func TestOwner_ResendsAMessageThatNeverReachedTheAgentExactlyOnce(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	// The owner died after turn_started, before prompt_sent.
	turn := userTurn("remember pear")
	turn[0].SendRecorded = true
	r.cutOff(id, "t2", false, turn...)
	r.mustRun(r.job(id, ""))
	r.mustRun(r.job(id, ""))
	evs := r.events(id)
	if n := turnsBy(evs, eventlog.SourceContinuation); n != 0 {
		t.Fatalf("an unsent turn was continued (%d continuations)", n)
	}
	if p := r.prompts(); len(p) != 2 || p[1] != "remember pear" {
		t.Fatalf("prompts sent: %q", p)
	}
	if got := lastAgentText(evs, "t3"); !strings.Contains(got, "pear") {
		t.Fatalf("turn t3 answered %q", got)
	}
}

func TestOwner_ASilentTurnOfAnOlderKandevIsContinuedQuotingItsRequest(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	// No send_recorded, no prompt_sent, no answer: nothing proves it unsent.
	r.cutOff(id, "t2", false, userTurn("remember pear")...)
	r.mustRun(r.job(id, ""))
	p := r.prompts()
	if len(p) != 2 || !strings.Contains(p[1], "interrupted") || !strings.Contains(p[1], "> remember pear") {
		t.Fatalf("prompts sent: %q", p)
	}
	if n := turnsBy(r.events(id), eventlog.SourceContinuation); n != 1 {
		t.Fatalf("%d continuations, want 1", n)
	}
}

func TestOwner_PausesWhenAPermissionWasPending(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	r.cutOff(id, "t2", true, append(userTurn("/write f.txt hi"),
		eventlog.Event{Type: eventlog.EventToolCall, ToolCallID: "call-1", ToolName: "write f.txt"},
		eventlog.Event{Type: eventlog.EventPermissionRequest, ToolCallID: "call-1"})...)
	_, err := r.run(context.Background(), r.job(id, ""))
	var nr *NotResumableError
	if !errors.As(err, &nr) || nr.SessionID != id || !strings.Contains(err.Error(), "permission request was pending") {
		t.Fatalf("err = %v; want not resumable, paused for the pending permission", err)
	}
	if s := r.session(id); s.Pause == nil || s.Pause.Kind != state.PausePermissionPending || s.CurrentTurn != "" {
		t.Fatalf("record: %+v", s)
	}
	if n := markers(r.events(id), history.MarkerContinuationPaused); n != 1 || len(r.agents) != 1 {
		t.Fatalf("%d pause markers, %d agents launched; want 1 and no new launch", n, len(r.agents))
	}
	r.mustRun(r.job(id, "go on"))
	if s := r.session(id); s.Pause != nil || turnsBy(r.events(id), eventlog.SourceContinuation) != 0 {
		t.Fatalf("the operator's prompt did not take over the pause: %+v", s)
	}
}

func TestOwner_PermissionModeDecidesTheAnswer(t *testing.T) {
	yes := func(sdk.RequestPermissionRequest) bool { return true }
	cases := []struct {
		name    string
		mode    string
		ask     func(sdk.RequestPermissionRequest) bool
		written bool
	}{
		{"approve-all writes", PermApproveAll, nil, true},
		{"deny-all refuses", PermDenyAll, nil, false},
		{"approve-reads refuses an edit", PermApproveReads, nil, false},
		{"ask writes when the user says yes", PermAsk, yes, true},
		{"ask refuses with no one to ask", PermAsk, nil, false},
	}
	r := newRig(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := r.create("/write f.txt hello")
			job := r.job(id, "")
			job.Permissions, job.Ask = tc.mode, tc.ask
			r.mustRun(job)
			_, err := os.Stat(filepath.Join(r.session(id).Cwd, "f.txt"))
			if written := err == nil; written != tc.written {
				t.Fatalf("file written: %v, want %v", written, tc.written)
			}
			var resolved []eventlog.Event
			for _, e := range r.events(id) {
				if e.Type == eventlog.EventPermissionResolved {
					resolved = append(resolved, e)
				}
			}
			if len(resolved) != 1 || !strings.Contains(string(resolved[0].Data), `"mode":"`+tc.mode+`"`) {
				t.Fatalf("permission answers logged: %+v", resolved)
			}
		})
	}
}

func TestOwner_AWriteErrorEndsTheRunWithAStorageError(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	job := r.job(id, "/say hi\n/sleep 5000")
	job.Emit = func(e eventlog.Event) {
		if e.Type == eventlog.EventUserMessage {
			// The home loses its sessions directory mid-turn: every later
			// record write fails for real.
			_ = os.RemoveAll(filepath.Dir(r.home.RecordPath(id)))
		}
	}
	_, err := r.run(context.Background(), job)
	var se *StorageError
	if !errors.As(err, &se) || !errors.Is(err, ErrStorage) || se.SessionID != id || !strings.Contains(err.Error(), "kandev repair "+id) {
		t.Fatalf("err = %v; want a storage error naming the session", err)
	}
}

func TestOwner_ShutdownLeavesTheTurnForOneContinuation(t *testing.T) {
	r := newRig(t)
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	job := r.job(id, "/say working\n/sleep 10000")
	job.Emit = func(e eventlog.Event) {
		if e.Type == eventlog.EventAgentMessage {
			cancel(ErrShutdown)
		}
	}
	if _, err := r.run(ctx, job); !errors.Is(err, ErrShutdown) {
		t.Fatalf("err = %v; want ErrShutdown", err)
	}
	s := r.session(id)
	if s.Interrupted == nil || s.Interrupted.Turn != "t2" || s.CurrentTurn != "" || s.StopReason != eventlog.StopShutdown {
		t.Fatalf("record after SIGTERM: %+v", s)
	}
	if n := markers(r.events(id), history.MarkerPromptInterrupted); n != 1 {
		t.Fatalf("%d prompt_interrupted markers, want 1", n)
	}
	r.mustRun(r.job(id, ""))
	r.mustRun(r.job(id, ""))
	if n := turnsBy(r.events(id), eventlog.SourceContinuation); n != 1 {
		t.Fatalf("%d continuations of the terminated turn, want 1", n)
	}
}

func TestOwner_APermissionAskedBeforeItsToolCallLogsTheCallFromTheRequest(t *testing.T) {
	r := newRig(t)
	// The agent never announces its tool call (as Gemini CLI does): only the
	// permission request names it.
	r.rewrite = func(line []byte) []byte {
		if bytes.Contains(line, []byte(`"sessionUpdate":"tool_call"`)) {
			return nil
		}
		return line
	}
	id := r.create("/write f.txt hello")
	job := r.job(id, "")
	job.Permissions = PermApproveAll
	r.mustRun(job)
	var order []string
	for _, e := range r.events(id) {
		switch e.Type {
		case eventlog.EventToolCall, eventlog.EventPermissionRequest, eventlog.EventPermissionResolved:
			order = append(order, e.Type+":"+e.ToolCallID)
		}
	}
	if len(order) != 3 || !strings.HasPrefix(order[0], eventlog.EventToolCall+":") || order[0][len(eventlog.EventToolCall)+1:] == "" ||
		!strings.HasPrefix(order[1], eventlog.EventPermissionRequest+":") {
		t.Fatalf("want the tool call logged from the request, then the request and its answer; got %v", order)
	}
}

func TestOwner_CtrlCBeforeTheAgentTookTheFirstPromptDropsItAndLeavesNothingToResume(t *testing.T) {
	for _, at := range []string{"launching", "initializing"} {
		t.Run(at, func(t *testing.T) {
			r := newRig(t)
			id := r.create("remember apple")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			job := r.job(id, "")
			job.Progress = func(msg string) {
				if strings.HasPrefix(msg, at) {
					cancel(ErrInterrupted)
				}
			}
			if _, err := r.run(ctx, job); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v; want ErrInterrupted", err)
			}
			s := r.session(id)
			if s.InitialPrompt != "" || s.State != state.StateWaitingForInput {
				t.Fatalf("record after Ctrl-C: initial prompt %q, state %s; want none, %s", s.InitialPrompt, s.State, state.StateWaitingForInput)
			}
			if b := verdict.Badge(s, false); b != verdict.BadgeIdle {
				t.Fatalf("badge %q, want idle", b)
			}
			r.mustRun(r.job(id, ""))
			if n := turnsBy(r.events(id), eventlog.SourceInitial); n != 0 {
				t.Fatalf("the cancelled first prompt was sent %d time(s) by the next owner", n)
			}
		})
	}
}

// sigtermWhileSilent runs the first prompt of a new session and sends
// SIGTERM while the agent sleeps on it, having answered nothing.
func sigtermWhileSilent(t *testing.T, r *rig, prompt string) string {
	t.Helper()
	id := r.create(prompt)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	job := r.job(id, "")
	job.Emit = func(e eventlog.Event) {
		if e.Type == eventlog.EventPromptSent {
			time.AfterFunc(500*time.Millisecond, func() { cancel(ErrShutdown) })
		}
	}
	if _, err := r.run(ctx, job); !errors.Is(err, ErrShutdown) {
		t.Fatalf("err = %v; want ErrShutdown", err)
	}
	return id
}

func TestOwner_ASilentFirstPromptCutBySIGTERMIsContinuedQuotingItNotSentAgain(t *testing.T) {
	r := newRig(t)
	prompt := "/sleep 4000\n/say done"
	id := sigtermWhileSilent(t, r, prompt)
	s := r.session(id)
	if s.InitialPrompt != "" || s.Interrupted == nil || s.Interrupted.Turn != "t1" {
		t.Fatalf("record after SIGTERM: initial %q, interrupted %+v; want the sent prompt's turn owed its continuation", s.InitialPrompt, s.Interrupted)
	}
	if b := verdict.Badge(s, false); b != verdict.BadgeNeedsResume {
		t.Fatalf("badge %q", b)
	}
	r.mustRun(r.job(id, ""))
	r.mustRun(r.job(id, ""))
	evs := r.events(id)
	if n := turnsBy(evs, eventlog.SourceInitial); n != 1 {
		t.Fatalf("%d turns sent the first prompt, want 1", n)
	}
	if n := turnsBy(evs, eventlog.SourceContinuation); n != 1 {
		t.Fatalf("%d continuations, want 1", n)
	}
	p := r.prompts()
	if len(p) != 2 || p[0] != prompt || !strings.Contains(p[1], "> /sleep 4000\n> /say done") {
		t.Fatalf("prompts sent: %q", p)
	}
}

func TestOwner_AContinuationAfterALoadThatReplayedTheRequestDoesNotQuoteIt(t *testing.T) {
	r := newRig(t)
	r.opts.NoResume = true // restored by session/load, whose replay has the prompt
	id := sigtermWhileSilent(t, r, "/sleep 4000\n/say done")
	res := r.mustRun(r.job(id, ""))
	if res.Restore != acp.RestoreLoad {
		t.Fatalf("restored by %s, want load", res.Restore)
	}
	p := r.prompts()
	if len(p) != 2 || !strings.Contains(p[1], "interrupted") || strings.Contains(p[1], "/sleep") {
		t.Fatalf("prompts sent: %q", p)
	}
}

func TestOwner_CtrlCOnASentFirstPromptIsAPlainCancel(t *testing.T) {
	r := newRig(t)
	id := r.create("/sleep 4000")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	job := r.job(id, "")
	job.Emit = func(e eventlog.Event) {
		if e.Type == eventlog.EventPromptSent {
			time.AfterFunc(300*time.Millisecond, func() { cancel(ErrInterrupted) })
		}
	}
	if _, err := r.run(ctx, job); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v; want ErrInterrupted", err)
	}
	evs := r.events(id)
	for _, e := range evs {
		if e.Type == eventlog.EventMarker && strings.Contains(e.Summary, "will not be sent") {
			t.Fatalf("a sent prompt was reported as not sent: %s", e.Summary)
		}
	}
	if s := r.session(id); s.InitialPrompt != "" || s.StopReason != eventlog.StopCancelled || verdict.Badge(s, false) != verdict.BadgeIdle {
		t.Fatalf("record after Ctrl-C: %+v", s)
	}
	r.mustRun(r.job(id, ""))
	if p := r.prompts(); len(p) != 1 {
		t.Fatalf("prompts sent: %q; want the cancelled one only", p)
	}
}

func TestOwner_AFirstPromptAnOlderKandevKeptAfterSendingItIsNotSentAgain(t *testing.T) {
	r := newRig(t)
	id := r.create("poison")
	// An older kandev sent it in t1, the agent died on it without a word, and
	// the record kept it (it waited for an answer): no send_recorded.
	r.cutOff(id, "t1", false, eventlog.Event{Type: eventlog.EventTurnStarted, Source: eventlog.SourceInitial},
		eventlog.Event{Type: eventlog.EventUserMessage, Role: "user", Content: "poison"},
		eventlog.Event{Type: eventlog.EventTurnEnded, StopReason: eventlog.StopProcessExit})
	if _, err := r.home.UpdateSession(id, func(s *state.Session) error {
		s.CurrentTurn, s.State, s.AgentLaunched = "", state.StateWaitingForInput, true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.mustRun(r.job(id, "remember KIWI"))
	if p := r.prompts(); len(p) != 1 || !strings.HasSuffix(p[0], "remember KIWI") && !strings.Contains(p[0], "=== CURRENT REQUEST ===\nremember KIWI\n") {
		t.Fatalf("prompts sent: %q; want the user's own only", p)
	}
	if s := r.session(id); s.InitialPrompt != "" {
		t.Fatalf("the record still keeps the first prompt %q", s.InitialPrompt)
	}
	if n := markers(r.events(id), history.MarkerSessionRepaired); n != 1 {
		t.Fatalf("%d session_repaired markers, want 1 saying the first prompt is not sent again", n)
	}
}

// An agent may send its session/load replay after its answer to the load
// (Gemini CLI does): the replay is still the load's, never the next turn's.
func TestOwner_ALoadReplaySentAfterTheAnswerIsNotRecordedInTheNextTurn(t *testing.T) {
	r := newRig(t)
	r.opts.NoResume = true
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	r.opts.LateReplay = true
	res := r.mustRun(r.job(id, "recall"))
	if res.Restore != acp.RestoreLoad {
		t.Fatalf("restored by %s, want load", res.Restore)
	}
	evs := r.events(id)
	text := map[string]string{}
	started := map[string]bool{}
	users, replayed := 0, int64(-1)
	for _, e := range evs {
		switch e.Type {
		case eventlog.EventTurnStarted:
			started[e.TurnID] = true
		case eventlog.EventUserMessage:
			users++
		case eventlog.EventAgentStarted:
			var d struct {
				Replayed int64 `json:"replayed_updates"`
			}
			_ = json.Unmarshal(e.Data, &d)
			replayed = d.Replayed
		case eventlog.EventAgentMessage, eventlog.EventAgentThought, eventlog.EventToolCall, eventlog.EventToolResult:
			if !started[e.TurnID] {
				t.Errorf("%s %q recorded in turn %q before it started", e.Type, e.Content, e.TurnID)
			}
			text[e.TurnID] += e.Content
		}
	}
	if text["t1"] != "OK, I will remember apple." || !strings.Contains(text["t2"], "apple") || strings.Contains(text["t2"], "OK, I will") || len(text) != 2 {
		t.Fatalf("agent text by turn: %q", text)
	}
	if users != 2 || replayed < 2 {
		t.Fatalf("%d user messages, %d replayed updates dropped; want 2 and the replay", users, replayed)
	}
}

// What the agent sends before it answers session/new (its commands) is
// logged before agent_started and the first turn, however long the
// recorder takes over it: here a 4 MB command list.
func TestOwner_UpdatesSentBeforeTheAgentAnsweredAreLoggedFirst(t *testing.T) {
	r := newRig(t)
	big := strings.Repeat("a long description ", 4<<20/19)
	r.rewrite = func(line []byte) []byte {
		return bytes.Replace(line, []byte("Compact the conversation"), []byte(big), 1)
	}
	id := r.create("remember apple")
	r.mustRun(r.job(id, ""))
	seq := map[string]int64{}
	for _, e := range r.events(id) {
		if _, seen := seq[e.Type]; !seen {
			seq[e.Type] = e.Seq
		}
	}
	if seq[eventlog.EventAgentUpdate] == 0 || seq[eventlog.EventAgentUpdate] > seq[eventlog.EventAgentStarted] {
		t.Fatalf("the commands the agent sent before answering were logged at %d, after agent_started at %d", seq[eventlog.EventAgentUpdate], seq[eventlog.EventAgentStarted])
	}
}
