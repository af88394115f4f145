package owner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

func TestInputMode_ATurnRunsUnderItsSendersMode(t *testing.T) {
	cases := []struct {
		name, sender, owner, want string
	}{
		{"the sender's deny-all wins over the owner's approve-all", PermDenyAll, PermApproveAll, PermDenyAll},
		{"the sender's defer wins over the owner's ask", PermDefer, PermAsk, PermDefer},
		{"the sender's approve-all wins over the owner's deny-all", PermApproveAll, PermDenyAll, PermApproveAll},
		{"an input written before inputs carried a mode runs under the owner's", "", PermApproveReads, PermApproveReads},
		{"a mode this kandev does not know runs under the owner's", "yolo", PermDenyAll, PermDenyAll},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := InputMode(state.Input{Permissions: tc.sender}, tc.owner); got != tc.want {
				t.Fatalf("InputMode = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestInputLinger_AQueuedLingerReplacesADetachedOwnersLinger(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	cases := []struct {
		name     string
		given    *int64
		current  time.Duration
		detached bool
		want     time.Duration
	}{
		{"no --linger keeps the owner's", nil, 5 * time.Minute, true, 5 * time.Minute},
		{"a longer --linger extends it", secs(600), 5 * time.Minute, true, 10 * time.Minute},
		{"a shorter --linger shortens it", secs(2), 5 * time.Minute, true, 2 * time.Second},
		{"--linger 0 makes the owner exit once the inbox is empty", secs(0), 5 * time.Minute, true, 0},
		{"a foreground owner keeps its own (the sender was refused)", secs(60), 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := InputLinger(state.Input{LingerSeconds: tc.given}, tc.current, tc.detached); got != tc.want {
				t.Fatalf("InputLinger = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLingerRefusal_OnlyAForegroundOwnerRefusesAnExplicitLinger(t *testing.T) {
	cases := []struct {
		name          string
		detached, set bool
		refused       bool
	}{
		{"no --linger is never refused", false, false, false},
		{"a detached owner takes --linger", true, true, false},
		{"a foreground owner cannot linger for its sender", false, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := LingerRefusal(&state.Session{ID: "s1", OwnerDetached: tc.detached, OwnerPID: 42}, tc.set)
			if (msg != "") != tc.refused {
				t.Fatalf("refusal %q, want refused=%v", msg, tc.refused)
			}
			if tc.refused && (!strings.Contains(msg, "s1") || !strings.Contains(msg, "without --linger")) {
				t.Fatalf("the refusal does not say what to do: %q", msg)
			}
		})
	}
}

func TestPromptInput_CarriesTheSendersModeAndOnlyAGivenLinger(t *testing.T) {
	d := 90 * time.Second
	in := PromptInput(Job{Prompt: "hi", Permissions: PermDefer, Queued: QueuedChoices{Linger: &d}})
	if in.Kind != state.InputPrompt || in.Text != "hi" || in.Permissions != PermDefer || in.LingerSeconds == nil || *in.LingerSeconds != 90 {
		t.Fatalf("input %+v", in)
	}
	if in := PromptInput(Job{Prompt: "hi", Permissions: PermAsk}); in.LingerSeconds != nil {
		t.Fatalf("a linger nobody gave is carried: %+v", in)
	}
}

func TestPickParked_AnAnswerNamesItsRequestOrTheOldest(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	a := state.ParkedRequest{ID: "rq-a", ToolName: "write A", RequestedAt: now.Add(-time.Minute)}
	b := state.ParkedRequest{ID: "rq-b", ToolName: "write B", RequestedAt: now.Add(-30 * time.Second)}
	// c was asked 10 ms after rq-a was resolved, 200 ms ago.
	c := state.ParkedRequest{ID: "rq-c", ToolName: "write C", RequestedAt: now.Add(-200 * time.Millisecond), After: "rq-a", AfterAt: at(-210 * time.Millisecond)}
	// d was asked 10 ms after rq-a was resolved, but has waited 5 s.
	d := state.ParkedRequest{ID: "rq-d", RequestedAt: now.Add(-5 * time.Second), After: "rq-a", AfterAt: at(-5010 * time.Millisecond)}
	// e was asked 3 s after the one before was resolved.
	e := state.ParkedRequest{ID: "rq-e", RequestedAt: now.Add(-100 * time.Millisecond), After: "rq-a", AfterAt: at(-3 * time.Second)}
	cases := []struct {
		name   string
		parked []state.ParkedRequest
		want   string
		got    string // "" when refused
	}{
		{"nothing parked is refused", nil, "", ""},
		{"nothing parked is refused even when named", nil, "rq-a", ""},
		{"no name answers the oldest", []state.ParkedRequest{a, b}, "", "rq-a"},
		{"a name answers that one", []state.ParkedRequest{a, b}, "rq-b", "rq-b"},
		{"a request already answered is refused, not applied to the next", []state.ParkedRequest{b}, "rq-a", ""},
		{"no name is refused for a request asked just after another was answered", []state.ParkedRequest{c}, "", ""},
		{"a name answers a request asked just after another was answered", []state.ParkedRequest{c}, "rq-c", "rq-c"},
		{"no name answers such a request once it has waited a while", []state.ParkedRequest{d}, "", "rq-d"},
		{"no name answers a request asked well after the one before", []state.ParkedRequest{e}, "", "rq-e"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PickParked("s1", tc.parked, tc.want, now)
			if tc.got == "" {
				if !errors.Is(err, state.ErrNotFound) {
					t.Fatalf("want not found, got %+v %v", p, err)
				}
				return
			}
			if err != nil || p.ID != tc.got {
				t.Fatalf("picked %+v %v, want %s", p, err, tc.got)
			}
		})
	}
}

func TestInputTurn_ErrorOfAFollowedTurnIsTheOwnersExitCause(t *testing.T) {
	cases := []struct {
		name       string
		stop       string
		terminated bool
		cancelled  bool // the owner logged a person's cancel in the turn
		parked     bool
		want       error // nil: success; errPlain: an error of no kind
	}{
		{"end_turn succeeds", eventlog.StopEndTurn, false, false, false, nil},
		{"a person's cancel from any process is an interruption", eventlog.StopCancelled, false, true, false, ErrInterrupted},
		{"a turn the agent itself ended cancelled is no interruption", eventlog.StopCancelled, false, false, false, nil},
		{"a stop is an interruption", eventlog.StopUserCanceled, false, true, false, ErrInterrupted},
		{"a SIGTERM of the owner is a termination", eventlog.StopShutdown, true, false, false, ErrShutdown},
		{"an agent death is an agent failure", eventlog.StopProcessExit, false, false, false, ErrAgentFailed},
		{"an error nothing blames on the agent is the owner's failed write", eventlog.StopError, false, false, false, ErrStorage},
		{"a parked request waits", "", false, false, true, ErrWaitingForPermission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tu := &inputTurn{stop: tc.stop, terminated: tc.terminated, cancelled: tc.cancelled, parked: tc.parked}
			err := tu.err("s1")
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// An error the agent's failure marker explains is the agent's.
	blamed := &inputTurn{inputID: "in-1"}
	for _, e := range []eventlog.Event{
		{Type: eventlog.EventTurnStarted, TurnID: "t1", InputID: "in-1"},
		{Type: eventlog.EventMarker, TurnID: "t1", Kind: string(history.MarkerProviderFailure)},
		{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopError},
	} {
		blamed.see0(e)
	}
	if err := blamed.err("s1"); !errors.Is(err, ErrAgentFailed) {
		t.Fatalf("a provider failure: %v", err)
	}
	// A shutdown without the SIGTERM marker (the owner was killed) is no termination.
	if err := (&inputTurn{stop: eventlog.StopShutdown}).err("s1"); err == nil || errors.Is(err, ErrShutdown) {
		t.Fatalf("killed owner: %v", err)
	}
}

func TestInputTurn_SeesThePersonsCancelMarkerOfItsTurn(t *testing.T) {
	tu := &inputTurn{inputID: "in-1"}
	for _, e := range []eventlog.Event{
		{Type: eventlog.EventTurnStarted, TurnID: "t1", InputID: "in-1"},
		{Type: eventlog.EventMarker, TurnID: "t1", Kind: string(history.MarkerPromptCancel)},
		{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopCancelled},
	} {
		tu.see0(e)
	}
	if !errors.Is(tu.err("s1"), ErrInterrupted) {
		t.Fatalf("a turn cancelled by a person: %v, want an interruption", tu.err("s1"))
	}
}

func TestInputTurn_SeesTheSIGTERMMarkerOfItsTurn(t *testing.T) {
	tu := &inputTurn{inputID: "in-1"}
	for _, e := range []eventlog.Event{
		{Type: eventlog.EventTurnStarted, TurnID: "t1", InputID: "in-0"},
		{Type: eventlog.EventMarker, TurnID: "t1", Kind: string(history.MarkerPromptInterrupted)},
		{Type: eventlog.EventTurnStarted, TurnID: "t2", InputID: "in-1"},
		{Type: eventlog.EventMarker, TurnID: "t2", Kind: string(history.MarkerPromptInterrupted)},
		{Type: eventlog.EventTurnEnded, TurnID: "t2", StopReason: eventlog.StopShutdown},
	} {
		tu.see0(e)
	}
	if !tu.ended || !tu.terminated || !errors.Is(tu.err("s1"), ErrShutdown) {
		t.Fatalf("followed turn %+v", tu)
	}
	other := &inputTurn{inputID: "in-1"}
	other.see0(eventlog.Event{Type: eventlog.EventMarker, TurnID: "t1", Kind: string(history.MarkerPromptInterrupted)})
	if other.terminated {
		t.Fatal("a marker of another turn counted")
	}
}

func TestOwnQueued_OnlyTheCallersOwnPromptCounts(t *testing.T) {
	ins := []state.Input{{ID: "in-c", Kind: state.InputCancel}, {ID: "in-p", Kind: state.InputPrompt}}
	if !ownQueued(ins, "in-p") || ownQueued(ins, "in-c") || ownQueued(ins, "") || ownQueued(nil, "in-p") {
		t.Fatal("ownQueued")
	}
}

func TestInputTurn_TheUsersPromptIsTheLastUserTurn(t *testing.T) {
	tu := &inputTurn{user: true}
	for _, e := range []eventlog.Event{
		{Type: eventlog.EventTurnStarted, TurnID: "t1", Source: eventlog.SourceUser}, // a re-sent interrupted message
		{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopCancelled},
		{Type: eventlog.EventTurnStarted, TurnID: "t2", Source: eventlog.SourceUser},
		{Type: eventlog.EventTurnEnded, TurnID: "t2", StopReason: eventlog.StopEndTurn},
		{Type: eventlog.EventTurnStarted, TurnID: "t3", Source: eventlog.SourceQueued},
		{Type: eventlog.EventTurnEnded, TurnID: "t3", StopReason: eventlog.StopCancelled},
	} {
		tu.see0(e)
	}
	if tu.turnID != "t2" || tu.stop != eventlog.StopEndTurn || tu.err("s1") != nil {
		t.Fatalf("followed %+v", tu)
	}
}

func TestAwaitResolution_FindsAnAnswerLoggedBeforeItLooked(t *testing.T) {
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := state.NewID(time.Now())
	if err := h.CreateSession(&state.Session{ID: id, State: state.StateWaitingForInput}); err != nil {
		t.Fatal(err)
	}
	log, _, err := h.OpenLog(id, eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// The record still lists rq-1 when approve looks, but the answer is
	// already in the log: approve must see it, not wait for it.
	if err := log.AppendSync(
		&eventlog.Event{Type: eventlog.EventPermissionRequest, RequestID: "rq-0", Deferred: true},
		&eventlog.Event{Type: eventlog.EventPermissionResolved, RequestID: "rq-0", Data: []byte(`{"allowed":false,"answered_by":"timeout"}`)},
		&eventlog.Event{Type: eventlog.EventPermissionRequest, RequestID: "rq-1", Deferred: true},
		&eventlog.Event{Type: eventlog.EventPermissionResolved, RequestID: "rq-1", Data: []byte(`{"allowed":true,"answered_by":"in-1"}`)},
	); err != nil {
		t.Fatal(err)
	}
	res, err := awaitResolution(context.Background(), h, id, eventlog.Size(h.LogPath(id)), "rq-1")
	if err != nil || res.AnsweredBy != "in-1" || !res.Allowed {
		t.Fatalf("resolution %+v %v", res, err)
	}
	// A request the log never answered, with no owner alive: not found.
	if _, err := awaitResolution(context.Background(), h, id, eventlog.Size(h.LogPath(id)), "rq-2"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("unanswered request with no owner: %v", err)
	}
}
